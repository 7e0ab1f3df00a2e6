/// Reads values in the wire format from one message's bytes, in either byte order. Every read
/// is bounds-checked and every padding byte must be zero; nothing here traps on bad input.
struct DBusWireReader {
    let bytes: ArraySlice<UInt8>
    let byteOrder: DBusByteOrder
    /// The index alignment is counted from: the message's first byte.
    let base: Int
    /// Where the bytes this reader may read end.
    let end: Int
    /// The index of the next byte.
    private(set) var offset: Int
    /// The descriptors sent with the message, which `h` values index (known once the header is read).
    var fileDescriptors: ArraySlice<DBusFileDescriptor>

    init(bytes: ArraySlice<UInt8>, byteOrder: DBusByteOrder, fileDescriptors: ArraySlice<DBusFileDescriptor> = []) {
        self.bytes = bytes
        self.byteOrder = byteOrder
        base = bytes.startIndex
        end = bytes.endIndex
        offset = bytes.startIndex
        self.fileDescriptors = fileDescriptors
    }

    /// The offset from the message's start, for errors.
    var position: Int { offset - base }

    var remaining: Int { end - offset }

    private func need(_ count: Int) throws(DBusWireError) {
        guard count <= end - offset else { throw .truncated(offset: position, needed: count - (end - offset)) }
    }

    /// Skips the padding to `alignment`, which must be zeros.
    mutating func align(_ alignment: Int) throws(DBusWireError) {
        let remainder = (offset - base) % alignment
        guard remainder != 0 else { return }
        let padding = alignment - remainder
        try need(padding)
        for index in offset..<(offset + padding) where bytes[index] != 0 {
            throw .nonZeroPadding(offset: index - base)
        }
        offset += padding
    }

    mutating func byte() throws(DBusWireError) -> UInt8 {
        try need(1)
        defer { offset += 1 }
        return bytes[offset]
    }

    /// An integer of any width, aligned to its size.
    mutating func integer<T: FixedWidthInteger>(_: T.Type) throws(DBusWireError) -> T {
        let size = MemoryLayout<T>.size
        try align(size)
        try need(size)
        var bits: UInt64 = 0
        switch byteOrder {
        case .little:
            for index in (0..<size).reversed() { bits = bits << 8 | UInt64(bytes[offset + index]) }
        case .big:
            for index in 0..<size { bits = bits << 8 | UInt64(bytes[offset + index]) }
        }
        offset += size
        return T(truncatingIfNeeded: bits)
    }

    /// `count` bytes and the nul after them, which must be the only nul.
    private mutating func terminated(count: Int, what: String) throws(DBusWireError) -> ArraySlice<UInt8> {
        let start = offset
        try need(count + 1)
        let text = bytes[offset..<(offset + count)]
        guard bytes[offset + count] == 0 else { throw .invalidString(offset: start - base, reason: "the \(what) does not end with a nul byte") }
        guard !text.contains(0) else { throw .invalidString(offset: start - base, reason: "the \(what) contains a nul byte") }
        offset += count + 1
        return text
    }

    mutating func string() throws(DBusWireError) -> String {
        let start = position
        let length = try integer(UInt32.self)
        let text = try terminated(count: Int(length), what: "string")
        // Through the contiguous buffer: the generic ArraySlice path costs a metadata lookup a string.
        let validated = text.withContiguousStorageIfAvailable { String(validating: $0, as: UTF8.self) } ?? String(validating: text, as: UTF8.self)
        guard let string = validated else { throw .invalidString(offset: start, reason: "it is not UTF-8") }
        return string
    }

    mutating func objectPath() throws(DBusWireError) -> DBusObjectPath {
        let length = try integer(UInt32.self)
        let text = try terminated(count: Int(length), what: "object path")
        return try DBusObjectPath(String(decoding: text, as: UTF8.self))
    }

    mutating func signature() throws(DBusWireError) -> DBusSignature {
        let length = try byte()
        return try DBusSignature(bytes: try terminated(count: Int(length), what: "signature"))
    }

    /// A value of `type`, inside `depth` containers.
    mutating func value(of type: DBusType, depth: Int = 0) throws(DBusWireError) -> DBusValue {
        switch type {
        case .byte: return .byte(try byte())
        case .boolean:
            let start = position
            let flag = try integer(UInt32.self)
            guard flag <= 1 else { throw .invalidBoolean(flag, offset: start) }
            return .boolean(flag == 1)
        case .int16: return .int16(try integer(Int16.self))
        case .uint16: return .uint16(try integer(UInt16.self))
        case .int32: return .int32(try integer(Int32.self))
        case .uint32: return .uint32(try integer(UInt32.self))
        case .int64: return .int64(try integer(Int64.self))
        case .uint64: return .uint64(try integer(UInt64.self))
        case .double: return .double(Double(bitPattern: try integer(UInt64.self)))
        case .string: return .string(try string())
        case .objectPath: return .objectPath(try objectPath())
        case .signature: return .signature(try signature())
        case .unixFD:
            let index = try integer(UInt32.self)
            guard Int(index) < fileDescriptors.count else { throw .fileDescriptorIndex(index, count: fileDescriptors.count) }
            return .unixFD(fileDescriptors[fileDescriptors.startIndex + Int(index)])
        case let .array(elementType):
            return try array(of: elementType, depth: depth)
        case let .struct(fieldTypes):
            try checkDepth(depth + 1)
            try align(8)
            var fields: [DBusValue] = []
            fields.reserveCapacity(fieldTypes.count)
            for fieldType in fieldTypes { fields.append(try value(of: fieldType, depth: depth + 1)) }
            return .struct(fields)
        case .dictEntry:
            // The signature parser admits dict entries only as array elements (read below).
            throw .invalidSignature(type.description, reason: "a dict entry outside an array")
        case .variant:
            try checkDepth(depth + 1)
            let length = try byte()
            let text = try terminated(count: Int(length), what: "signature")
            // A one-code signature of a basic type needs no parser (and no allocation).
            let innerType: DBusType
            if length == 1, let basic = DBusType.basic(code: text[text.startIndex]) {
                innerType = basic
            } else {
                innerType = try DBusSignature.single(text)
            }
            return .variant(try value(of: innerType, depth: depth + 1))
        }
    }

    /// An array: its length (at most 64 MiB), the padding to the first element's boundary
    /// (there even when the array is empty), elements up to exactly the length.
    private mutating func array(of elementType: DBusType, depth: Int) throws(DBusWireError) -> DBusValue {
        try checkDepth(depth + 1)
        let length = Int(try integer(UInt32.self))
        guard length <= dbusMaximumArrayLength else { throw .arrayTooLong(length) }
        try align(elementType.alignment)
        try need(length)
        let arrayStart = offset
        let arrayEnd = offset + length
        switch elementType {
        case .byte:
            offset = arrayEnd
            return .bytes(Array(bytes[arrayStart..<arrayEnd]))
        case let .dictEntry(keyType, valueType):
            try checkDepth(depth + 2)
            var entries: [DBusDictionary.Entry] = []
            // Each element takes at least one byte, so this loop ends.
            while offset < arrayEnd {
                try align(8)
                let key = try value(of: keyType, depth: depth + 2)
                let value = try value(of: valueType, depth: depth + 2)
                entries.append(DBusDictionary.Entry(key: key, value: value))
            }
            guard offset == arrayEnd else { throw .arrayLengthMismatch(offset: arrayStart - base) }
            return .dictionary(DBusDictionary(keyType: keyType, valueType: valueType, entries: entries))
        default:
            var elements: [DBusValue] = []
            while offset < arrayEnd {
                elements.append(try value(of: elementType, depth: depth + 1))
            }
            guard offset == arrayEnd else { throw .arrayLengthMismatch(offset: arrayStart - base) }
            return .array(DBusArray(elementType: elementType, elements: elements))
        }
    }

    private func checkDepth(_ depth: Int) throws(DBusWireError) {
        guard depth <= dbusMaximumValueDepth else { throw .nestedTooDeeply(limit: dbusMaximumValueDepth) }
    }
}
