/// One D-Bus value of any type: a message's arguments are a list of them.
///
/// Each case is one type of the D-Bus type system; a value knows its ``type``, so a message's
/// signature follows from its arguments. Arrays carry their element type (an empty array has
/// one too); an array of dict entries is a ``dictionary(_:)``; a ``variant(_:)`` wraps a value of
/// any type, which travels with its own signature.
///
/// ```swift
/// let filter = DBusValue(["Transport": .string("le"), "RSSI": .int16(-70)])   // a{sv}
/// let name = properties["Name"]?.stringValue
/// ```
///
/// The typed accessors (``stringValue``, ``uint32Value``, ``bytesValue``, …) return `nil` for a
/// value of another type; ``DBusRepresentable`` converts whole Swift types (arrays, dictionaries).
public enum DBusValue: Hashable, Sendable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    /// A Unix file descriptor (type `h`): sent alongside the message by the kernel.
    case unixFD(DBusFileDescriptor)
    /// An array of anything but dict entries.
    case array(DBusArray)
    /// An array of dict entries (`a{KV}`), in wire order.
    case dictionary(DBusDictionary)
    case `struct`([DBusValue])
    /// A value with its own signature (`v`).
    indirect case variant(DBusValue)

    /// The value's complete type.
    public var type: DBusType {
        switch self {
        case .byte: return .byte
        case .boolean: return .boolean
        case .int16: return .int16
        case .uint16: return .uint16
        case .int32: return .int32
        case .uint32: return .uint32
        case .int64: return .int64
        case .uint64: return .uint64
        case .double: return .double
        case .string: return .string
        case .objectPath: return .objectPath
        case .signature: return .signature
        case .unixFD: return .unixFD
        case let .array(array): return .array(array.elementType)
        case let .dictionary(dictionary): return .array(.dictEntry(key: dictionary.keyType, value: dictionary.valueType))
        case let .struct(fields): return .struct(fields.map(\.type))
        case .variant: return .variant
        }
    }
}

/// The elements of a D-Bus array and their type, which an empty array has too. An array of
/// bytes (`ay`: characteristic values, manufacturer data) is kept as bytes.
public struct DBusArray: Hashable, Sendable {
    /// The type of every element.
    public let elementType: DBusType
    private let storage: Storage

    private enum Storage: Hashable, Sendable {
        case bytes([UInt8])
        case values([DBusValue])
    }

    /// An array of `elementType`. Elements of another type make the message that holds the
    /// array fail to encode with ``DBusWireError/typeMismatch(expected:got:)``.
    public init(elementType: DBusType, elements: [DBusValue]) {
        self.elementType = elementType
        if elementType == .byte {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(elements.count)
            for element in elements {
                guard case let .byte(byte) = element else {
                    storage = .values(elements)
                    return
                }
                bytes.append(byte)
            }
            storage = .bytes(bytes)
        } else {
            storage = .values(elements)
        }
    }

    /// An `ay`.
    public init(bytes: [UInt8]) {
        elementType = .byte
        storage = .bytes(bytes)
    }

    /// The elements (for an `ay`, made from its bytes).
    public var elements: [DBusValue] {
        switch storage {
        case let .bytes(bytes): return bytes.map(DBusValue.byte)
        case let .values(values): return values
        }
    }

    /// The bytes of an `ay` (`nil` for another element type).
    public var bytes: [UInt8]? {
        if case let .bytes(bytes) = storage { return bytes }
        return nil
    }

    /// The number of elements.
    public var count: Int {
        switch storage {
        case let .bytes(bytes): return bytes.count
        case let .values(values): return values.count
        }
    }
}

/// A D-Bus dictionary (`a{KV}`): its entries in wire order, with their key and value types.
/// Keys are expected to be unique; a peer's duplicates are kept, and lookups find the first.
public struct DBusDictionary: Hashable, Sendable {
    /// One key and its value.
    public struct Entry: Hashable, Sendable {
        /// The key, of the dictionary's key type.
        public var key: DBusValue
        /// The value, of the dictionary's value type.
        public var value: DBusValue

        /// An entry.
        public init(key: DBusValue, value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    /// The type of every key: a basic type.
    public let keyType: DBusType
    /// The type of every value.
    public let valueType: DBusType
    /// The entries, in order.
    public let entries: [Entry]

    /// A dictionary of `keyType` to `valueType`. Entries of other types make the message that
    /// holds it fail to encode with ``DBusWireError/typeMismatch(expected:got:)``.
    public init(keyType: DBusType, valueType: DBusType, entries: [Entry]) {
        self.keyType = keyType
        self.valueType = valueType
        self.entries = entries
    }

    /// The value of the first entry whose key is `key`.
    public subscript(key: DBusValue) -> DBusValue? {
        entries.first { $0.key == key }?.value
    }

    /// The value of the first entry whose key is the string `key`, unwrapped if it is a variant
    /// (as in the `a{sv}` of properties and options).
    public subscript(key: String) -> DBusValue? {
        for entry in entries {
            if case let .string(candidate) = entry.key, candidate == key { return entry.value.unwrapped }
        }
        return nil
    }

    /// The number of entries.
    public var count: Int { entries.count }
}
