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

    /// One header field: code, name, type and check, and its place in ``DBusHeaderFields``.
    struct Field: Sendable {
        let code: UInt8
        let name: String
        let type: DBusType
        let get: @Sendable (DBusHeaderFields) -> DBusValue?
        let set: @Sendable (inout DBusHeaderFields, DBusValue) throws(DBusWireError) -> Void

        init<T: DBusBasicRepresentable>(
            _ code: UInt8, _ name: String, _ keyPath: WritableKeyPath<DBusHeaderFields, T?> & Sendable,
            check: @escaping @Sendable (T) throws(DBusWireError) -> Void = { _ in }
        ) {
            self.code = code
            self.name = name
            type = T.dbusType
            get = { $0[keyPath: keyPath]?.dbusValue }
            set = { fields, value throws(DBusWireError) in
                guard let typed = T(dbusValue: value) else {
                    throw .invalidHeader("header field \(name) has type \"\(value.type)\", not \"\(T.dbusType)\"")
                }
                try check(typed)
                fields[keyPath: keyPath] = typed
            }
        }
    }

    static let all: [Field] = [
        Field(1, "PATH", \.path),
        Field(2, "INTERFACE", \.interface, check: DBusNames.check(interface:)),
        Field(3, "MEMBER", \.member, check: DBusNames.check(member:)),
        Field(4, "ERROR_NAME", \.errorName, check: DBusNames.check(error:)),
        Field(5, "REPLY_SERIAL", \.replySerial, check: { serial throws(DBusWireError) in
            guard serial != 0 else { throw .invalidHeader("REPLY_SERIAL is 0") }
        }),
        Field(6, "DESTINATION", \.destination, check: DBusNames.check(bus:)),
        Field(7, "SENDER", \.sender, check: DBusNames.check(bus:)),
        Field(8, "SIGNATURE", \.signature),
        Field(9, "UNIX_FDS", \.unixFDs),
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
