/// A Swift type with a D-Bus type: integers, `Bool`, `Double`, `String`, object paths,
/// signatures, ``DBusValue`` itself (a variant), and arrays and dictionaries of these. (A file
/// descriptor is read with ``DBusValue/fileDescriptor``.)
///
/// ```swift
/// let reply = try await bluez.call(destination: "org.bluez", path: .root,
///                                  interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
/// let objects = try reply.decode([DBusObjectPath: [String: [String: DBusValue]]].self)
/// ```
public protocol DBusRepresentable: Sendable {
    /// The D-Bus type of every value of this Swift type.
    static var dbusType: DBusType { get }
    /// This value as a D-Bus value of ``dbusType``.
    var dbusValue: DBusValue { get }
    /// The Swift value of `dbusValue`; `nil` if it has another type.
    init?(dbusValue: DBusValue)
}

/// Basic types, which may be dictionary keys.
public protocol DBusBasicRepresentable: DBusRepresentable, Hashable {}

extension UInt8: DBusBasicRepresentable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.byteValue else { return nil }
        self = value
    }
}

extension Bool: DBusBasicRepresentable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.boolValue else { return nil }
        self = value
    }
}

extension Int16: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.int16Value else { return nil }
        self = value
    }
}

extension UInt16: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.uint16Value else { return nil }
        self = value
    }
}

extension Int32: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.int32Value else { return nil }
        self = value
    }
}

extension UInt32: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.uint32Value else { return nil }
        self = value
    }
}

extension Int64: DBusBasicRepresentable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.int64Value else { return nil }
        self = value
    }
}

extension UInt64: DBusBasicRepresentable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.uint64Value else { return nil }
        self = value
    }
}

extension Double: DBusBasicRepresentable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.doubleValue else { return nil }
        self = value
    }
}

extension String: DBusBasicRepresentable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.stringValue else { return nil }
        self = value
    }
}

extension DBusObjectPath: DBusBasicRepresentable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.objectPathValue else { return nil }
        self = value
    }
}

extension DBusSignature: DBusBasicRepresentable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init?(dbusValue: DBusValue) {
        guard let value = dbusValue.signatureValue else { return nil }
        self = value
    }
}

/// `DBusValue` as a Swift type is a variant (`v`): `[String: DBusValue]` is an `a{sv}`.
/// Reading one unwraps the variant.
extension DBusValue: DBusRepresentable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    public init?(dbusValue: DBusValue) {
        guard case let .variant(inner) = dbusValue else { return nil }
        self = inner
    }
}

extension Array: DBusRepresentable where Element: DBusRepresentable {
    public static var dbusType: DBusType { .array(Element.dbusType) }

    public var dbusValue: DBusValue {
        // A type check, not a cast: an empty array of any type casts to [UInt8].
        if Element.self == UInt8.self, let bytes = self as? [UInt8] { return .bytes(bytes) }
        return .array(DBusArray(elementType: Element.dbusType, elements: map(\.dbusValue)))
    }

    public init?(dbusValue: DBusValue) {
        guard case let .array(array) = dbusValue, array.elementType == Element.dbusType else { return nil }
        if Element.self == UInt8.self, let bytes = array.bytes, let typed = bytes as? [Element] {
            self = typed
            return
        }
        var elements: [Element] = []
        elements.reserveCapacity(array.count)
        for value in array.elements {
            guard let element = Element(dbusValue: value) else { return nil }
            elements.append(element)
        }
        self = elements
    }
}

extension Dictionary: DBusRepresentable where Key: DBusBasicRepresentable, Value: DBusRepresentable {
    public static var dbusType: DBusType { .array(.dictEntry(key: Key.dbusType, value: Value.dbusType)) }

    /// Entries sorted by their key's text, so that the same dictionary always encodes the same.
    public var dbusValue: DBusValue {
        let entries = map { DBusDictionary.Entry(key: $0.key.dbusValue, value: $0.value.dbusValue) }
            .sorted { $0.key.description < $1.key.description }
        return .dictionary(DBusDictionary(keyType: Key.dbusType, valueType: Value.dbusType, entries: entries))
    }

    /// The first of duplicate keys wins, as in ``DBusDictionary``'s lookups.
    public init?(dbusValue: DBusValue) {
        guard case let .dictionary(dictionary) = dbusValue, dictionary.keyType == Key.dbusType,
              dictionary.valueType == Value.dbusType else { return nil }
        var result: [Key: Value] = [:]
        result.reserveCapacity(dictionary.count)
        for entry in dictionary.entries {
            guard let key = Key(dbusValue: entry.key), let value = Value(dbusValue: entry.value) else { return nil }
            if result[key] == nil { result[key] = value }
        }
        self = result
    }
}
