import BluetoothCore

/// ATT_READ_REQ (Core 6.0, Vol 3, Part F, 3.4.4.3): read one attribute value.
public struct ATTReadRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readRequest

    public var handle: UInt16 = 0

    public init() {}

    public init(handle: UInt16) { self.handle = handle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.end()
    }

    public var description: String { ATTWire.hex(handle) }
}

/// ATT_READ_RSP (Core 6.0, Vol 3, Part F, 3.4.4.4): the value, cut to ATT_MTU − 1 octets.
public struct ATTReadResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readResponse

    public var value: [UInt8] = []

    public init() {}

    public init(value: [UInt8]) { self.value = value }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.rest(&value)
    }

    public var description: String { ATTWire.bytes(value) }
}

/// ATT_READ_BLOB_REQ (Core 6.0, Vol 3, Part F, 3.4.4.5): read part of a long value.
public struct ATTReadBlobRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readBlobRequest

    public var handle: UInt16 = 0
    /// Offset of the first octet to read, from zero.
    public var offset: UInt16 = 0

    public init() {}

    public init(handle: UInt16, offset: UInt16) {
        self.handle = handle
        self.offset = offset
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.uint16(&offset)
        try coder.end()
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset)" }
}

/// ATT_READ_BLOB_RSP (Core 6.0, Vol 3, Part F, 3.4.4.6): part of the value from the offset;
/// shorter than ATT_MTU − 1 octets at the end of the value.
public struct ATTReadBlobResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readBlobResponse

    public var partValue: [UInt8] = []

    public init() {}

    public init(partValue: [UInt8]) { self.partValue = partValue }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.rest(&partValue)
    }

    public var description: String { ATTWire.bytes(partValue) }
}

/// ATT_READ_MULTIPLE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.7): read two or more values of
/// known fixed size (the last may vary). Decoding requires at least two handles.
public struct ATTReadMultipleRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readMultipleRequest

    public var handles: [UInt16] = []

    public init() {}

    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.handles(&handles, minimumCount: 2)
    }

    public var description: String { handles.map(ATTWire.hex).joined(separator: " ") }
}

/// ATT_READ_MULTIPLE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.8): the values concatenated in the
/// order requested, cut to ATT_MTU − 1 octets. Splitting them needs the sizes the higher
/// layer knows, so they are kept as one buffer.
public struct ATTReadMultipleResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readMultipleResponse

    public var setOfValues: [UInt8] = []

    public init() {}

    public init(setOfValues: [UInt8]) { self.setOfValues = setOfValues }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.rest(&setOfValues)
    }

    public var description: String { ATTWire.bytes(setOfValues) }
}

/// ATT_READ_MULTIPLE_VARIABLE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.11): read two or more
/// values of any length. Decoding requires at least two handles.
public struct ATTReadMultipleVariableRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readMultipleVariableRequest

    public var handles: [UInt16] = []

    public init() {}

    public init(handles: [UInt16]) { self.handles = handles }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.handles(&handles, minimumCount: 2)
    }

    public var description: String { handles.map(ATTWire.hex).joined(separator: " ") }
}

/// ATT_READ_MULTIPLE_VARIABLE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.12): a Length Value Tuple
/// per requested handle.
///
/// The list is cut at ATT_MTU − 1 octets, possibly inside the last value, but never inside a
/// Value Length field; so the last tuple may hold fewer octets than its Value Length says
/// (``LengthValue/isTruncated``), and the client reads the rest with Read Blob.
public struct ATTReadMultipleVariableResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readMultipleVariableResponse

    /// One Length Value Tuple (Vol 3, Part F, Table 3.29).
    public struct LengthValue: Hashable, Sendable, PacketFields {
        /// The full length of the attribute value.
        public var valueLength: UInt16 = 0
        /// The octets included in this PDU (all of them unless truncated).
        public var value: [UInt8] = []

        public init() {}

        public init(valueLength: UInt16, value: [UInt8]) {
            self.valueLength = valueLength
            self.value = value
        }

        /// A complete tuple.
        public init(value: [UInt8]) { self.init(valueLength: UInt16(truncatingIfNeeded: value.count), value: value) }

        public var isTruncated: Bool { value.count < Int(valueLength) }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&valueLength)
            // The last tuple may end with the PDU, before its Value Length (Vol 3, Part F, 3.4.4.12).
            try coder.bytes(&value, upTo: Int(valueLength))
        }
    }

    public var values: [LengthValue] = []

    public init() {}

    public init(values: [LengthValue]) { self.values = values }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        // 4 octets at least (Vol 3, Part F, Table 3.28).
        try coder.requireRemaining(4)
        try coder.list(&values)
    }

    public var description: String {
        values.map { "\($0.valueLength):\(ATTWire.bytes($0.value))" }.joined(separator: " ")
    }
}
