import BluetoothCore

/// ATT_HANDLE_VALUE_NTF (Core 6.0, Vol 3, Part F, 3.4.7.1): a value pushed by the server,
/// not confirmed.
public struct ATTHandleValueNotification: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.handleValueNotification

    public var handle: UInt16 = 0
    public var value: [UInt8] = []

    public init() {}

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.rest(&value)
    }

    public var description: String { "\(ATTWire.hex(handle))=\(ATTWire.bytes(value))" }
}

/// ATT_HANDLE_VALUE_IND (Core 6.0, Vol 3, Part F, 3.4.7.2): a value pushed by the server;
/// the client answers with a confirmation, even when it discards the value.
public struct ATTHandleValueIndication: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.handleValueIndication

    public var handle: UInt16 = 0
    public var value: [UInt8] = []

    public init() {}

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.rest(&value)
    }

    public var description: String { "\(ATTWire.hex(handle))=\(ATTWire.bytes(value))" }
}

/// ATT_HANDLE_VALUE_CFM (Core 6.0, Vol 3, Part F, 3.4.7.3). No parameters.
public struct ATTHandleValueConfirmation: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.handleValueConfirmation

    public init() {}

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.end()
    }

    public var description: String { "" }
}

/// ATT_MULTIPLE_HANDLE_VALUE_NTF (Core 6.0, Vol 3, Part F, 3.4.7.4): two or more values in
/// one notification, as Handle Length Value Tuples. The server never truncates a tuple, so
/// decoding requires every tuple complete, and the list at least 8 octets long (Table 3.41).
public struct ATTMultipleHandleValueNotification: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.multipleHandleValueNotification

    /// One Handle Length Value Tuple (Vol 3, Part F, Table 3.42).
    public struct HandleValue: Hashable, Sendable, PacketFields {
        public var handle: UInt16 = 0
        public var value: [UInt8] = []

        public init() {}

        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&handle)
            var length = UInt16(truncatingIfNeeded: value.count)
            try coder.uint16(&length)
            try coder.bytes(&value, count: Int(length))
        }
    }

    public var values: [HandleValue] = []

    public init() {}

    public init(values: [HandleValue]) { self.values = values }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.requireRemaining(8)
        try coder.list(&values)
    }

    public var description: String {
        values.map { "\(ATTWire.hex($0.handle))=\(ATTWire.bytes($0.value))" }.joined(separator: " ")
    }
}
