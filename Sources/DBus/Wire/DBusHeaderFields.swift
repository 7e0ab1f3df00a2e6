/// A message's header fields (D-Bus Specification, "Header Fields"), each declared once in
/// ``all`` with its code, its type and its check, which both directions use: a field that
/// would not decode is never sent.
struct DBusHeaderFields {
    var path: DBusObjectPath?
    var interface: String?
    var member: String?
    var errorName: String?
    var replySerial: UInt32?
    var destination: String?
    var sender: String?
    var signature: DBusSignature?
    var unixFDs: UInt32?

    init() {}

    init(message: DBusMessage) {
        path = message.path
        interface = message.interface
        member = message.member
        errorName = message.errorName?.rawValue
        replySerial = message.replySerial
        destination = message.destination
        sender = message.sender
    }

    /// One header field: code, name, type (its Swift type's) and check, and its place in
    /// ``DBusHeaderFields``.
    struct Field: Sendable {
        let code: UInt8
        let name: String
        let get: @Sendable (DBusHeaderFields) -> DBusValue?
        let set: @Sendable (inout DBusHeaderFields, DBusValue) throws(DBusWireError) -> Void

        init<T: DBusBasicRepresentable>(
            _ code: UInt8, _ name: String, get: @escaping @Sendable (DBusHeaderFields) -> T?,
            set: @escaping @Sendable (inout DBusHeaderFields, T) -> Void,
            check: @escaping @Sendable (T) throws(DBusWireError) -> Void = { _ in }
        ) {
            self.code = code
            self.name = name
            self.get = { get($0)?.dbusValue }
            self.set = { fields, value throws(DBusWireError) in
                guard let typed = T(dbusValue: value) else {
                    throw .invalidHeader("header field \(name) has type \"\(value.type)\", not \"\(T.dbusType)\"")
                }
                try check(typed)
                set(&fields, typed)
            }
        }
    }

    static let all: [Field] = [
        Field(1, "PATH", get: { $0.path }, set: { $0.path = $1 }),
        Field(2, "INTERFACE", get: { $0.interface }, set: { $0.interface = $1 }, check: DBusNames.check(interface:)),
        Field(3, "MEMBER", get: { $0.member }, set: { $0.member = $1 }, check: DBusNames.check(member:)),
        Field(4, "ERROR_NAME", get: { $0.errorName }, set: { $0.errorName = $1 }, check: DBusNames.check(error:)),
        Field(5, "REPLY_SERIAL", get: { $0.replySerial }, set: { $0.replySerial = $1 }, check: { serial throws(DBusWireError) in
            guard serial != 0 else { throw .invalidHeader("REPLY_SERIAL is 0") }
        }),
        Field(6, "DESTINATION", get: { $0.destination }, set: { $0.destination = $1 }, check: DBusNames.check(bus:)),
        Field(7, "SENDER", get: { $0.sender }, set: { $0.sender = $1 }, check: DBusNames.check(bus:)),
        Field(8, "SIGNATURE", get: { $0.signature }, set: { $0.signature = $1 }),
        Field(9, "UNIX_FDS", get: { $0.unixFDs }, set: { $0.unixFDs = $1 }),
    ]

    /// The fields each message type must have (unknown types need none).
    private func checkRequired(for kind: DBusMessage.Kind) throws(DBusWireError) {
        let present: [(name: String, isPresent: Bool)]
        switch kind {
        case .methodCall: present = [("PATH", path != nil), ("MEMBER", member != nil)]
        case .signal: present = [("PATH", path != nil), ("INTERFACE", interface != nil), ("MEMBER", member != nil)]
        case .error: present = [("ERROR_NAME", errorName != nil), ("REPLY_SERIAL", replySerial != nil)]
        case .methodReturn: present = [("REPLY_SERIAL", replySerial != nil)]
        default: present = []
        }
        if let missing = present.first(where: { !$0.isPresent }) {
            throw .invalidHeader("a \(kind) needs the \(missing.name) field")
        }
    }

    /// The fields as the header's `a(yv)`, each checked as a receiver checks it.
    func encoded(for kind: DBusMessage.Kind) throws(DBusWireError) -> DBusValue {
        var checked = DBusHeaderFields()
        var entries: [DBusValue] = []
        for field in Self.all {
            guard let value = field.get(self) else { continue }
            try field.set(&checked, value)
            entries.append(.struct([.byte(field.code), .variant(value)]))
        }
        try checked.checkRequired(for: kind)
        return .array(of: .struct([.byte, .variant]), entries)
    }

    /// The fields of a received header. Unknown fields are ignored, as the specification
    /// requires; a known field twice or of the wrong type is an error.
    init(decoding value: DBusValue, for kind: DBusMessage.Kind) throws(DBusWireError) {
        var seen: Set<UInt8> = []
        for element in value.arrayValue ?? [] {
            guard case let .struct(parts) = element, parts.count == 2, let code = parts[0].byteValue,
                  case let .variant(fieldValue) = parts[1] else { continue }
            guard let field = Self.all.first(where: { $0.code == code }) else { continue }
            guard seen.insert(code).inserted else { throw .invalidHeader("header field \(field.name) appears twice") }
            try field.set(&self, fieldValue)
        }
        try checkRequired(for: kind)
    }
}
