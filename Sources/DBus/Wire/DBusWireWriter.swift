/// The byte order a message is written in. Readers take both (D-Bus Specification, "Byte order
/// and alignment"); this package writes little-endian unless told otherwise.
public enum DBusByteOrder: Sendable, Equatable {
    case little
    case big

    /// The first byte of a message: `l` or `B`.
    var marker: UInt8 { self == .little ? UInt8(ascii: "l") : UInt8(ascii: "B") }

    init?(marker: UInt8) {
        switch marker {
        case UInt8(ascii: "l"): self = .little
        case UInt8(ascii: "B"): self = .big
        default: return nil
        }
    }
}

/// The most containers a value may be inside, variants included: the specification's 32 arrays
/// plus 32 structs, applied across variants too (as libdbus and GLib do), so that a variant
/// cannot nest without limit in seven bytes a level.
let dbusMaximumValueDepth = 64

/// The longest array (D-Bus Specification, "Valid Signatures": 2^26 bytes).
let dbusMaximumArrayLength = 1 << 26

/// Writes values in the wire format: aligned to their boundary from the start of the message,
/// in the writer's byte order, collecting the Unix file descriptors they name.
struct DBusWireWriter {
    private(set) var bytes: [UInt8] = []
    let byteOrder: DBusByteOrder
    /// The descriptors the written `h` values index, each once.
    private(set) var fileDescriptors: [DBusFileDescriptor] = []

    init(byteOrder: DBusByteOrder, capacity: Int = 256) {
        self.byteOrder = byteOrder
        bytes.reserveCapacity(capacity)
    }

    mutating func pad(to alignment: Int) {
        let remainder = bytes.count % alignment
        if remainder != 0 { bytes.append(contentsOf: repeatElement(0, count: alignment - remainder)) }
    }

    /// An integer of any width, aligned to its size.
    mutating func integer<T: FixedWidthInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        pad(to: size)
        let bits = UInt64(truncatingIfNeeded: value)
        switch byteOrder {
        case .little:
            for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: bits >> (8 * index))) }
        case .big:
            for index in (0..<size).reversed() { bytes.append(UInt8(truncatingIfNeeded: bits >> (8 * index))) }
        }
    }

    /// Overwrites a `UInt32` written earlier (an array's length, known once its elements are).
    mutating func patch(_ value: UInt32, at offset: Int) {
        for index in 0..<4 {
            let shift = byteOrder == .little ? 8 * index : 8 * (3 - index)
            bytes[offset + index] = UInt8(truncatingIfNeeded: value >> shift)
        }
    }

    /// A string or object path: its length, its bytes and a nul.
    mutating func string(_ text: String) throws(DBusWireError) {
        let utf8 = text.utf8
        let hasNul = utf8.withContiguousStorageIfAvailable { $0.contains(0) } ?? utf8.contains(0)
        guard !hasNul else { throw .invalidString(offset: bytes.count, reason: "it contains a nul byte") }
        guard utf8.count <= DBusMessage.maximumLength else { throw .messageTooLong(utf8.count, limit: DBusMessage.maximumLength) }
        integer(UInt32(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    mutating func append(_ other: [UInt8]) {
        bytes.append(contentsOf: other)
    }

    /// A signature: a one-byte length, the signature and a nul.
    mutating func signature(_ signature: DBusSignature) {
        let utf8 = signature.description.utf8
        bytes.append(UInt8(utf8.count))
        bytes.append(contentsOf: utf8)
        bytes.append(0)
    }

    /// `value` as `type`, which the value must have (checked all the way down), inside `depth`
    /// containers.
    mutating func value(_ value: DBusValue, as type: DBusType, depth: Int = 0) throws(DBusWireError) {
        switch (type, value) {
        case let (.byte, .byte(byte)): bytes.append(byte)
        case let (.boolean, .boolean(flag)): integer(UInt32(flag ? 1 : 0))
        case let (.int16, .int16(number)): integer(number)
        case let (.uint16, .uint16(number)): integer(number)
        case let (.int32, .int32(number)): integer(number)
        case let (.uint32, .uint32(number)): integer(number)
        case let (.int64, .int64(number)): integer(number)
        case let (.uint64, .uint64(number)): integer(number)
        case let (.double, .double(number)): integer(number.bitPattern)
        case let (.string, .string(text)): try string(text)
        case let (.objectPath, .objectPath(path)): try string(path.description)
        case let (.signature, .signature(signature)): self.signature(signature)
        case let (.unixFD, .unixFD(descriptor)):
            if let index = fileDescriptors.firstIndex(where: { $0 === descriptor }) {
                integer(UInt32(index))
            } else {
                integer(UInt32(fileDescriptors.count))
                fileDescriptors.append(descriptor)
            }
        case let (.array(elementType), .array(array)) where array.elementType == elementType:
            try checkDepth(depth + 1)
            try arrayBody(elementAlignment: elementType.alignment) { writer throws(DBusWireError) in
                if let bytes = array.bytes {
                    writer.bytes.append(contentsOf: bytes)
                } else {
                    for element in array.elements { try writer.value(element, as: elementType, depth: depth + 1) }
                }
            }
        case let (.array(.dictEntry(keyType, valueType)), .dictionary(dictionary))
            where dictionary.keyType == keyType && dictionary.valueType == valueType:
            try checkDepth(depth + 2)
            try arrayBody(elementAlignment: 8) { writer throws(DBusWireError) in
                for entry in dictionary.entries {
                    writer.pad(to: 8)
                    try writer.value(entry.key, as: keyType, depth: depth + 2)
                    try writer.value(entry.value, as: valueType, depth: depth + 2)
                }
            }
        case let (.struct(types), .struct(fields)) where types.count == fields.count && !types.isEmpty:
            try checkDepth(depth + 1)
            pad(to: 8)
            for (field, fieldType) in zip(fields, types) { try self.value(field, as: fieldType, depth: depth + 1) }
        case let (.variant, .variant(inner)):
            try checkDepth(depth + 1)
            let innerType = inner.type
            if let code = innerType.basicCode {
                // Most variants (the a{sv} of properties) hold a basic type: its signature is its code.
                bytes += [1, code, 0]
            } else {
                // Checks the inner type against the signature rules (length, nesting, dict entries).
                signature(try DBusSignature([innerType]))
            }
            try self.value(inner, as: innerType, depth: depth + 1)
        default:
            throw .typeMismatch(expected: type.description, got: value.type.description)
        }
    }

    /// An array: its length (patched once the elements are written), the padding to the first
    /// element's boundary (there even when the array is empty), the elements.
    private mutating func arrayBody(elementAlignment: Int, _ elements: (inout DBusWireWriter) throws(DBusWireError) -> Void) throws(DBusWireError) {
        integer(UInt32(0))
        let lengthOffset = bytes.count - 4
        pad(to: elementAlignment)
        let start = bytes.count
        try elements(&self)
        let length = bytes.count - start
        guard length <= dbusMaximumArrayLength else { throw .arrayTooLong(length) }
        patch(UInt32(length), at: lengthOffset)
    }

    private func checkDepth(_ depth: Int) throws(DBusWireError) {
        guard depth <= dbusMaximumValueDepth else { throw .nestedTooDeeply(limit: dbusMaximumValueDepth) }
    }
}
