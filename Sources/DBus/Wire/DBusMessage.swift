/// A D-Bus message: a method call, a method return, an error or a signal, with its header
/// fields and its arguments (D-Bus Specification, "Message Format").
///
/// The body's signature and the number of Unix file descriptors are not stored: they follow
/// from ``body`` when the message is encoded. The serial is given when the connection sends it.
public struct DBusMessage: Sendable, CustomStringConvertible {
    /// The message type (unknown types are kept: the specification says to ignore them).
    public struct Kind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// A call of a method; a method return or an error answers it, unless it expects none.
        public static let methodCall = Kind(rawValue: 1)
        /// The successful answer to a call.
        public static let methodReturn = Kind(rawValue: 2)
        /// The error answer to a call.
        public static let error = Kind(rawValue: 3)
        /// A signal, emitted to whoever has a matching rule.
        public static let signal = Kind(rawValue: 4)

        public var description: String {
            switch self {
            case .methodCall: return "method call"
            case .methodReturn: return "method return"
            case .error: return "error"
            case .signal: return "signal"
            default: return "message type \(rawValue)"
            }
        }
    }

    /// The header's flags.
    public struct Flags: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }

        /// The caller wants no reply (and gets none).
        public static let noReplyExpected = Flags(rawValue: 0x1)
        /// The bus must not start a program to own the destination.
        public static let noAutoStart = Flags(rawValue: 0x2)
        /// The caller may wait for an interactive authorization prompt (polkit).
        public static let allowInteractiveAuthorization = Flags(rawValue: 0x4)
    }

    /// What the message is: a call, a return, an error or a signal.
    public var kind: Kind
    /// The header's flags.
    public var flags: Flags
    /// The sender's number for this message, never 0 once sent.
    public var serial: UInt32
    /// The object a call goes to or a signal comes from.
    public var path: DBusObjectPath?
    /// The interface of the method or signal (required for signals).
    public var interface: String?
    /// The method or signal name.
    public var member: String?
    /// The error's name (error messages).
    public var errorName: DBusErrorName?
    /// The serial of the call this message answers (method returns and errors).
    public var replySerial: UInt32?
    /// The connection the message is for.
    public var destination: String?
    /// The unique name of the connection that sent it (set by the bus).
    public var sender: String?
    /// The arguments.
    public var body: [DBusValue]

    /// A message with the given header fields and arguments (checked when encoded).
    public init(
        kind: Kind,
        flags: Flags = [],
        serial: UInt32 = 0,
        path: DBusObjectPath? = nil,
        interface: String? = nil,
        member: String? = nil,
        errorName: DBusErrorName? = nil,
        replySerial: UInt32? = nil,
        destination: String? = nil,
        sender: String? = nil,
        body: [DBusValue] = []
    ) {
        self.kind = kind
        self.flags = flags
        self.serial = serial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.replySerial = replySerial
        self.destination = destination
        self.sender = sender
        self.body = body
    }

    /// A method call.
    public static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = [], flags: Flags = []
    ) -> DBusMessage {
        DBusMessage(kind: .methodCall, flags: flags, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// A signal.
    public static func signal(path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = [], destination: String? = nil) -> DBusMessage {
        DBusMessage(kind: .signal, flags: .noReplyExpected, path: path, interface: interface, member: member, destination: destination, body: body)
    }

    /// The successful answer to `call`.
    public static func methodReturn(to call: DBusMessage, body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(kind: .methodReturn, flags: .noReplyExpected, replySerial: call.serial, destination: call.sender, body: body)
    }

    /// The error answer to `call`; the message, if not empty, is its first argument.
    public static func error(to call: DBusMessage, name: DBusErrorName, message: String) -> DBusMessage {
        DBusMessage(kind: .error, flags: .noReplyExpected, errorName: name, replySerial: call.serial, destination: call.sender,
                    body: message.isEmpty ? [] : [.string(message)])
    }

    /// The signature of ``body``.
    public var signature: DBusSignature {
        get throws(DBusWireError) { try DBusSignature(body.map(\.type)) }
    }

    /// An error message's text: its first argument when that is a string.
    public var errorMessage: String {
        body.first?.stringValue ?? ""
    }

    /// The arguments as Swift values of the given types, which must be all of them:
    /// `let (name, properties) = try message.decode(String.self, [String: DBusValue].self)`.
    /// Throws ``DBusError/unexpectedReply(_:)`` naming the signature that did not fit.
    public func decode<each T: DBusRepresentable>(_ types: repeat (each T).Type) throws(DBusError) -> (repeat each T) {
        var expected: [DBusType] = []
        for type in repeat each types { expected.append(type.dbusType) }
        let actual = body.map(\.type)
        guard actual == expected else {
            let want = expected.map(\.description).joined()
            let got = actual.map(\.description).joined()
            throw .unexpectedReply("\(self.summary) has arguments \"\(got)\", not \"\(want)\"")
        }
        var index = 0
        func next<U: DBusRepresentable>(_: U.Type) throws(DBusError) -> U {
            defer { index += 1 }
            guard let value = U(dbusValue: body[index]) else {
                throw .unexpectedReply("\(summary): argument \(index) is not a \(U.dbusType)")
            }
            return value
        }
        return (repeat try next((each T).self))
    }

    /// One line for logs and errors: `method call org.bluez.Adapter1.StartDiscovery on /org/bluez/hci0`.
    public var summary: String {
        var text = kind.description
        switch kind {
        case .methodCall, .signal:
            text += " " + [interface, member].compactMap { $0 }.joined(separator: ".")
            if let path { text += " on \(path)" }
        case .error:
            text += " \(errorName?.rawValue ?? "?")"
            if let replySerial { text += " to #\(replySerial)" }
        case .methodReturn:
            if let replySerial { text += " to #\(replySerial)" }
        default:
            break
        }
        return text
    }

    public var description: String {
        var text = "\(summary) #\(serial)"
        if let sender { text += " from \(sender)" }
        if let destination { text += " to \(destination)" }
        if !body.isEmpty { text += ": " + body.map(\.description).joined(separator: ", ") }
        return text
    }
}
