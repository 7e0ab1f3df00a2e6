/// Which messages a subscriber wants (D-Bus Specification, "Match Rules"): the bus sends a
/// connection the signals that match any of its rules (AddMatch), and each signal stream of a
/// connection keeps those that match its own rule.
///
/// ```swift
/// let rule = DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties",
///                          member: "PropertiesChanged", pathNamespace: try DBusObjectPath("/org/bluez/hci0"))
/// rule.description   // type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',…
/// ```
public struct DBusMatchRule: Hashable, Sendable, CustomStringConvertible {
    /// The message type (`signal` unless set otherwise).
    public var kind: DBusMessage.Kind?
    /// A unique or well-known name. For a well-known name the connection follows its owner
    /// (NameOwnerChanged), so a stream keeps only what the current owner sends.
    public var sender: String?
    /// The interface of the signal (or method).
    public var interface: String?
    /// The signal (or method) name.
    public var member: String?
    /// Exactly this object path.
    public var path: DBusObjectPath?
    /// This path or any below it.
    public var pathNamespace: DBusObjectPath?
    /// The connection a unicast message is for (a unique name).
    public var destination: String?
    /// `argN='value'`: argument N (0…63) is this string.
    public var arguments: [Int: String]
    /// `argNpath='value'`: argument N is a string or object path equal to this, or one of the
    /// two ends with `/` and starts the other.
    public var argumentPaths: [Int: String]
    /// `arg0namespace='org.bluez'`: argument 0 is this bus or interface name or one below it.
    public var argument0Namespace: String?

    /// A rule; every key left `nil` (or empty) matches anything.
    public init(
        kind: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, destination: String? = nil,
        arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:], argument0Namespace: String? = nil
    ) {
        self.kind = kind
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
        self.argument0Namespace = argument0Namespace
    }

    /// The rule as AddMatch takes it: `key='value'` pairs, apostrophes written `'\''`.
    public var description: String {
        var pairs: [(String, String)] = []
        if let kind {
            let names: [DBusMessage.Kind: String] = [.signal: "signal", .methodCall: "method_call", .methodReturn: "method_return", .error: "error"]
            pairs.append(("type", names[kind] ?? "signal"))
        }
        if let sender { pairs.append(("sender", sender)) }
        if let interface { pairs.append(("interface", interface)) }
        if let member { pairs.append(("member", member)) }
        if let path { pairs.append(("path", path.description)) }
        if let pathNamespace { pairs.append(("path_namespace", pathNamespace.description)) }
        if let destination { pairs.append(("destination", destination)) }
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { pairs.append(("arg\(index)", value)) }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) { pairs.append(("arg\(index)path", value)) }
        if let argument0Namespace { pairs.append(("arg0namespace", argument0Namespace)) }
        return pairs.map { "\($0.0)=\(Self.quote($0.1))" }.joined(separator: ",")
    }

    /// `'value'`, with each apostrophe closing the quote, escaped, and reopening it.
    private static func quote(_ value: String) -> String {
        "'" + value.replacingApostrophes() + "'"
    }

    /// Checks what the bus would refuse before asking it: names, argument indexes.
    func validate() throws(DBusError) {
        do throws(DBusWireError) {
            if let sender { try DBusNames.check(bus: sender) }
            if let interface { try DBusNames.check(interface: interface) }
            if let member { try DBusNames.check(member: member) }
            if let destination { try DBusNames.check(bus: destination) }
        } catch {
            throw .invalidArgument("invalid match rule: \(error)")
        }
        let indexes = Array(arguments.keys) + Array(argumentPaths.keys)
        guard indexes.allSatisfy({ (0..<64).contains($0) }) else { throw .invalidArgument("invalid match rule: argument indexes run from 0 to 63") }
        if path != nil, pathNamespace != nil { throw .invalidArgument("invalid match rule: path and path_namespace together") }
    }

    /// Whether the rule's sender is a name whose owner must be followed to match locally.
    var followedSender: String? {
        guard let sender, !sender.hasPrefix(":"), sender != DBusNames.bus else { return nil }
        return sender
    }

    /// Whether `message` matches, given the current owner of a well-known sender name.
    func matches(_ message: DBusMessage, senderOwner: String?) -> Bool {
        if let kind, message.kind != kind { return false }
        if let sender {
            let expected = followedSender == nil ? sender : senderOwner
            guard let expected, message.sender == expected else { return false }
        }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path, messagePath.isWithin(pathNamespace) else { return false }
        }
        if let destination, message.destination != destination { return false }
        for (index, value) in arguments {
            guard index < message.body.count, message.body[index].stringValue == value else { return false }
        }
        for (index, value) in argumentPaths {
            guard index < message.body.count else { return false }
            let argument: String
            switch message.body[index] {
            case let .string(text): argument = text
            case let .objectPath(objectPath): argument = objectPath.description
            default: return false
            }
            guard Self.pathsMatch(argument, value) else { return false }
        }
        if let argument0Namespace {
            guard let first = message.body.first?.stringValue,
                  first == argument0Namespace || first.hasPrefix(argument0Namespace + ".") else { return false }
        }
        return true
    }

    /// argNpath: equal, or one ends with `/` and is a prefix of the other.
    private static func pathsMatch(_ argument: String, _ rule: String) -> Bool {
        if argument == rule { return true }
        if rule.hasSuffix("/"), argument.hasPrefix(rule) { return true }
        if argument.hasSuffix("/"), rule.hasPrefix(argument) { return true }
        return false
    }
}

private extension String {
    func replacingApostrophes() -> String {
        var result = ""
        for character in self {
            if character == "'" { result += "'\\''" } else { result.append(character) }
        }
        return result
    }
}
