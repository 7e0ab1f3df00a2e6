import BluetoothCore

/// ATT_READ_REQ (Core 6.0, Vol 3, Part F, 3.4.4.3): read one attribute value.
public struct ATTReadRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readRequest

    public var handle: UInt16

    public init(handle: UInt16) { self.handle = handle }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(handle) }

    public var description: String { ATTWire.hex(handle) }
}

/// ATT_READ_RSP (Core 6.0, Vol 3, Part F, 3.4.4.4): the value, cut to ATT_MTU − 1 octets.
public struct ATTReadResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readResponse

    public var value: [UInt8]

    public init(value: [UInt8]) { self.value = value }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { value = reader.readRemaining() }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(contentsOf: value) }

    public var description: String { ATTWire.bytes(value) }
}

/// ATT_READ_BLOB_REQ (Core 6.0, Vol 3, Part F, 3.4.4.5): read part of a long value.
public struct ATTReadBlobRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readBlobRequest

    public var handle: UInt16
    /// Offset of the first octet to read, from zero.
    public var offset: UInt16

    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        offset = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(offset)
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset)" }
}

/// ATT_READ_BLOB_RSP (Core 6.0, Vol 3, Part F, 3.4.4.6): part of the value from the offset;
/// shorter than ATT_MTU − 1 octets at the end of the value.
public struct ATTReadBlobResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readBlobResponse

    public var partValue: [UInt8]

    public init(partValue: [UInt8]) { self.partValue = partValue }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { partValue = reader.readRemaining() }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(contentsOf: partValue) }

    public var description: String { ATTWire.bytes(partValue) }
}

/// ATT_READ_MULTIPLE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.7): read two or more values of
/// known fixed size (the last may vary). Decoding requires at least two handles.
public struct ATTReadMultipleRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readMultipleRequest

    public var handles: [UInt16]

    public init(handles: [UInt16]) { self.handles = handles }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handles = try ATTWire.readHandles(&reader, minimumCount: 2)
    }

    public func encodeParameters(into writer: inout ByteWriter) { for handle in handles { writer.write(handle) } }

    public var description: String { handles.map(ATTWire.hex).joined(separator: " ") }
}

/// ATT_READ_MULTIPLE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.8): the values concatenated in the
/// order requested, cut to ATT_MTU − 1 octets. Splitting them needs the sizes the higher
/// layer knows, so they are kept as one buffer.
public struct ATTReadMultipleResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readMultipleResponse

    public var setOfValues: [UInt8]

    public init(setOfValues: [UInt8]) { self.setOfValues = setOfValues }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { setOfValues = reader.readRemaining() }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(contentsOf: setOfValues) }

    public var description: String { ATTWire.bytes(setOfValues) }
}

/// ATT_READ_MULTIPLE_VARIABLE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.11): read two or more
/// values of any length. Decoding requires at least two handles.
public struct ATTReadMultipleVariableRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.readMultipleVariableRequest

    public var handles: [UInt16]

    public init(handles: [UInt16]) { self.handles = handles }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handles = try ATTWire.readHandles(&reader, minimumCount: 2)
    }

    public func encodeParameters(into writer: inout ByteWriter) { for handle in handles { writer.write(handle) } }

    public var description: String { handles.map(ATTWire.hex).joined(separator: " ") }
}

/// ATT_READ_MULTIPLE_VARIABLE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.12): a Length Value Tuple
/// per requested handle.
///
/// The list is cut at ATT_MTU − 1 octets, possibly inside the last value, but never inside a
/// Value Length field; so the last tuple may hold fewer octets than its Value Length says
/// (``LengthValue/isTruncated``), and the client reads the rest with Read Blob.
public struct ATTReadMultipleVariableResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.readMultipleVariableResponse

    /// One Length Value Tuple (Vol 3, Part F, Table 3.29).
    public struct LengthValue: Hashable, Sendable {
        /// The full length of the attribute value.
        public var valueLength: UInt16
        /// The octets included in this PDU (all of them unless truncated).
        public var value: [UInt8]

        public init(valueLength: UInt16, value: [UInt8]) {
            self.valueLength = valueLength
            self.value = value
        }

        /// A complete tuple.
        public init(value: [UInt8]) { self.init(valueLength: UInt16(truncatingIfNeeded: value.count), value: value) }

        public var isTruncated: Bool { value.count < Int(valueLength) }
    }

    public var values: [LengthValue]

    public init(values: [LengthValue]) { self.values = values }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        // 4 octets at least (Vol 3, Part F, Table 3.28).
        guard reader.remainingCount >= 4 else {
            throw .truncated(context: reader.context, needed: 4, available: reader.remainingCount)
        }
        var values: [LengthValue] = []
        while !reader.isAtEnd {
            let length = try reader.readUInt16()
            let count = min(Int(length), reader.remainingCount)
            values.append(LengthValue(valueLength: length, value: try reader.readBytes(count)))
        }
        self.values = values
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        for tuple in values {
            writer.write(tuple.valueLength)
            writer.write(contentsOf: tuple.value)
        }
    }

    public var description: String {
        values.map { "\($0.valueLength):\(ATTWire.bytes($0.value))" }.joined(separator: " ")
    }
}
