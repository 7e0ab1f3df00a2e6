/// Typed reads of a ``DBusValue``: each is `nil` when the value has another type. Variants are
/// not looked through, except by ``unwrapped`` and the string subscript.
extension DBusValue {
    /// The value of a `y`.
    public var byteValue: UInt8? {
        if case let .byte(value) = self { return value }
        return nil
    }

    /// The value of a `b`.
    public var boolValue: Bool? {
        if case let .boolean(value) = self { return value }
        return nil
    }

    /// The value of an `n`.
    public var int16Value: Int16? {
        if case let .int16(value) = self { return value }
        return nil
    }

    /// The value of a `q`.
    public var uint16Value: UInt16? {
        if case let .uint16(value) = self { return value }
        return nil
    }

    /// The value of an `i`.
    public var int32Value: Int32? {
        if case let .int32(value) = self { return value }
        return nil
    }

    /// The value of a `u`.
    public var uint32Value: UInt32? {
        if case let .uint32(value) = self { return value }
        return nil
    }

    /// The value of an `x`.
    public var int64Value: Int64? {
        if case let .int64(value) = self { return value }
        return nil
    }

    /// The value of a `t`.
    public var uint64Value: UInt64? {
        if case let .uint64(value) = self { return value }
        return nil
    }

    /// The value of a `d`.
    public var doubleValue: Double? {
        if case let .double(value) = self { return value }
        return nil
    }

    /// Any integer type (`y n q i u x t`) as an `Int`, if it fits: BlueZ's RSSI is `n`, its
    /// TxPower `n`, its Appearance `q`, its MTU `q`.
    public var integerValue: Int? {
        switch self {
        case let .byte(value): return Int(value)
        case let .int16(value): return Int(value)
        case let .uint16(value): return Int(value)
        case let .int32(value): return Int(value)
        case let .uint32(value): return Int(value)
        case let .int64(value): return Int(value)
        case let .uint64(value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The value of an `s`.
    public var stringValue: String? {
        if case let .string(value) = self { return value }
        return nil
    }

    /// The value of an `o`.
    public var objectPathValue: DBusObjectPath? {
        if case let .objectPath(value) = self { return value }
        return nil
    }

    /// The value of a `g`.
    public var signatureValue: DBusSignature? {
        if case let .signature(value) = self { return value }
        return nil
    }

    /// The value of an `h`: the descriptor object (see ``DBusFileDescriptor/take()``).
    public var fileDescriptor: DBusFileDescriptor? {
        if case let .unixFD(value) = self { return value }
        return nil
    }

    /// The elements of an array (not of a dictionary).
    public var arrayValue: [DBusValue]? {
        if case let .array(value) = self { return value.elements }
        return nil
    }

    /// The bytes of an `ay`.
    public var bytesValue: [UInt8]? {
        if case let .array(value) = self { return value.bytes }
        return nil
    }

    /// The entries of a dictionary (`a{…}`).
    public var dictionaryValue: DBusDictionary? {
        if case let .dictionary(value) = self { return value }
        return nil
    }

    /// The fields of a struct.
    public var structValue: [DBusValue]? {
        if case let .struct(value) = self { return value }
        return nil
    }

    /// What a variant holds (`nil` if this is no variant).
    public var variantValue: DBusValue? {
        if case let .variant(value) = self { return value }
        return nil
    }

    /// The value inside any number of variants (the value itself if it is no variant).
    public var unwrapped: DBusValue {
        var value = self
        while case let .variant(inner) = value { value = inner }
        return value
    }

    /// In a dictionary with string keys: the value for `key`, unwrapped if it is a variant.
    public subscript(key: String) -> DBusValue? {
        dictionaryValue?[key]
    }
}

/// Building values.
extension DBusValue {
    /// An `ay`.
    public static func bytes(_ bytes: [UInt8]) -> DBusValue {
        .array(DBusArray(bytes: bytes))
    }

    /// An array of `elementType` (see ``DBusArray/init(elementType:elements:)``).
    public static func array(of elementType: DBusType, _ elements: [DBusValue]) -> DBusValue {
        .array(DBusArray(elementType: elementType, elements: elements))
    }

    /// The D-Bus value of a Swift value: `DBusValue(["Transport": .string("le")])` is an `a{sv}`,
    /// `DBusValue(["a", "b"])` an `as`, `DBusValue(UInt16(23))` a `q`.
    public init(_ value: some DBusRepresentable) {
        self = value.dbusValue
    }
}

extension DBusValue: ExpressibleByStringInterpolation, ExpressibleByBooleanLiteral {
    /// A string literal is a `s`.
    public init(stringLiteral value: String) {
        self = .string(value)
    }

    /// So is an interpolated one: `"sensor \(index)"`.
    public init(stringInterpolation: DefaultStringInterpolation) {
        self = .string(String(stringInterpolation: stringInterpolation))
    }

    /// A boolean literal is a `b`.
    public init(booleanLiteral value: Bool) {
        self = .boolean(value)
    }
}

extension DBusValue: CustomStringConvertible {
    /// The value as text, for logs: strings quoted, paths as `o"/org/bluez"`, arrays in `[]`,
    /// dictionaries in `{}`, structs in `()`, variants in `<>`, bytes in hex.
    public var description: String {
        switch self {
        case let .byte(value): return "0x" + String(value, radix: 16)
        case let .boolean(value): return String(value)
        case let .int16(value): return String(value)
        case let .uint16(value): return String(value)
        case let .int32(value): return String(value)
        case let .uint32(value): return String(value)
        case let .int64(value): return String(value)
        case let .uint64(value): return String(value)
        case let .double(value): return String(value)
        case let .string(value): return "\"" + value + "\""
        case let .objectPath(value): return "o\"\(value)\""
        case let .signature(value): return "g\"\(value)\""
        case let .unixFD(value): return value.description
        case let .array(array):
            if let bytes = array.bytes {
                return "[" + bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined() + "]"
            }
            return "[" + array.elements.map(\.description).joined(separator: ", ") + "]"
        case let .dictionary(dictionary):
            return "{" + dictionary.entries.map { "\($0.key): \($0.value)" }.joined(separator: ", ") + "}"
        case let .struct(fields): return "(" + fields.map(\.description).joined(separator: ", ") + ")"
        case let .variant(value): return "<\(value)>"
        }
    }
}
