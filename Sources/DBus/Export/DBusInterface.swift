/// An interface of an exported object: methods whose handlers are async Swift closures,
/// properties with getters and setters, and the signals it emits (for introspection).
///
/// ```swift
/// let agent = DBusInterface("org.bluez.Agent1", methods: [
///     DBusMethod("RequestPasskey", inputs: [.init("device", .objectPath)], outputs: [.init("passkey", .uint32)]) { call in
///         guard let passkey = await askUser() else {
///             throw DBusError.errorReply(name: "org.bluez.Error.Rejected", message: "the user declined")
///         }
///         return [.uint32(passkey)]
///     },
///     DBusMethod("Release") { _ in [] },
/// ])
/// try await bus.export([agent], at: try DBusObjectPath("/org/example/agent"))
/// ```
public struct DBusInterface: Sendable {
    /// The interface name, `org.bluez.Agent1`.
    public var name: String
    /// Its methods.
    public var methods: [DBusMethod]
    /// Its properties.
    public var properties: [DBusProperty]
    /// The signals it emits (for introspection).
    public var signals: [DBusSignalDeclaration]

    /// An interface named `name`.
    public init(_ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [], signals: [DBusSignalDeclaration] = []) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }

    func method(_ name: String) -> DBusMethod? { methods.first { $0.name == name } }
    func property(_ name: String) -> DBusProperty? { properties.first { $0.name == name } }

    /// Checks the names and signatures, as a peer's introspection will read them.
    func validate() throws(DBusError) {
        do throws(DBusWireError) {
            try DBusNames.check(interface: name)
            for method in methods {
                try DBusNames.check(member: method.name)
                _ = try DBusSignature(method.inputs.map(\.type))
                _ = try DBusSignature(method.outputs.map(\.type))
            }
            for property in properties {
                try DBusNames.check(member: property.name)
                _ = try DBusSignature([property.type])
            }
            for signal in signals {
                try DBusNames.check(member: signal.name)
                _ = try DBusSignature(signal.arguments.map(\.type))
            }
        } catch {
            throw .invalidArgument("cannot export interface \(name): \(error)")
        }
        let methodNames = methods.map(\.name)
        let propertyNames = properties.map(\.name)
        guard Set(methodNames).count == methodNames.count, Set(propertyNames).count == propertyNames.count else {
            throw .invalidArgument("cannot export interface \(name): a method or property name appears twice")
        }
    }
}

/// A named, typed argument of a method or signal.
public struct DBusArgument: Sendable {
    /// The name introspection shows (optional).
    public var name: String?
    /// Its type.
    public var type: DBusType

    /// An argument of `type`, named `name`.
    public init(_ name: String?, _ type: DBusType) {
        self.name = name
        self.type = type
    }
}

/// A method of an exported interface. The handler gets the call, whose arguments have already
/// been checked against ``inputs``, and returns the values of ``outputs``; it throws
/// ``DBusError/errorReply(name:message:)`` to answer with that error (any other error answers
/// `org.freedesktop.DBus.Error.Failed`).
public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (DBusMethodCall) async throws -> [DBusValue]

    /// The method name, `RequestPasskey`.
    public var name: String
    /// The arguments a call must carry (checked before the handler runs: else InvalidArgs).
    public var inputs: [DBusArgument]
    /// The values the handler returns (checked: else Failed).
    public var outputs: [DBusArgument]
    /// Runs the call, in a task of its own; cancelled when the connection closes.
    public var handler: Handler

    /// A method named `name`.
    public init(_ name: String, inputs: [DBusArgument] = [], outputs: [DBusArgument] = [], handler: @escaping Handler) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.handler = handler
    }
}

/// A call to an exported method, as its handler sees it.
public struct DBusMethodCall: Sendable {
    /// The whole message (sender, flags, serial).
    public let message: DBusMessage
    /// The object the call went to.
    public let path: DBusObjectPath

    /// The arguments, of the method's input types.
    public var arguments: [DBusValue] { message.body }
    /// The caller's unique name.
    public var sender: String? { message.sender }
}

/// A property of an exported interface: readable if it has a getter, writable if it has a
/// setter. Getters run for Get, GetAll, GetManagedObjects and InterfacesAdded; a setter gets a
/// value already checked against ``type``.
public struct DBusProperty: Sendable {
    public typealias Getter = @Sendable () async throws -> DBusValue
    public typealias Setter = @Sendable (DBusValue) async throws -> Void

    /// The property name, `Value`.
    public var name: String
    /// The type of its value.
    public var type: DBusType
    /// Reads the value (`nil`: write-only).
    public var get: Getter?
    /// Writes a value (`nil`: read-only).
    public var set: Setter?

    /// A property named `name` of `type`.
    public init(_ name: String, type: DBusType, get: Getter?, set: Setter? = nil) {
        self.name = name
        self.type = type
        self.get = get
        self.set = set
    }

    /// A read-only property whose value never changes.
    public static func constant(_ name: String, _ value: DBusValue) -> DBusProperty {
        DBusProperty(name, type: value.type, get: { value })
    }

    /// `read`, `write` or `readwrite`, as introspection says.
    var access: String {
        switch (get != nil, set != nil) {
        case (true, true): return "readwrite"
        case (false, true): return "write"
        default: return "read"
        }
    }
}

/// A signal an interface emits, for introspection (``DBusConnection/emitSignal(path:interface:member:arguments:destination:)`` sends it).
public struct DBusSignalDeclaration: Sendable {
    /// The signal name.
    public var name: String
    /// Its arguments.
    public var arguments: [DBusArgument]

    /// A signal named `name`.
    public init(_ name: String, arguments: [DBusArgument] = []) {
        self.name = name
        self.arguments = arguments
    }
}
