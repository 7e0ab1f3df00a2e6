import BluetoothCore

/// ATT_PREPARE_WRITE_REQ (Core 6.0, Vol 3, Part F, 3.4.6.1): queue part of a value.
public struct ATTPrepareWriteRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.prepareWriteRequest

    public var handle: UInt16 = 0
    public var offset: UInt16 = 0
    public var partValue: [UInt8] = []

    public init() {}

    public init(handle: UInt16, offset: UInt16, partValue: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.partValue = partValue
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.uint16(&offset)
        try coder.rest(&partValue)
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset) \(ATTWire.bytes(partValue))" }
}

/// ATT_PREPARE_WRITE_RSP (Core 6.0, Vol 3, Part F, 3.4.6.2): echoes the request so the
/// client can check the server received it intact.
public struct ATTPrepareWriteResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.prepareWriteResponse

    public var handle: UInt16 = 0
    public var offset: UInt16 = 0
    public var partValue: [UInt8] = []

    public init() {}

    public init(handle: UInt16, offset: UInt16, partValue: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.partValue = partValue
    }

    /// The response that echoes `request`.
    public init(echoing request: ATTPrepareWriteRequest) {
        self.init(handle: request.handle, offset: request.offset, partValue: request.partValue)
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.uint16(&offset)
        try coder.rest(&partValue)
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset) \(ATTWire.bytes(partValue))" }
}

/// ATT_EXECUTE_WRITE_REQ (Core 6.0, Vol 3, Part F, 3.4.6.3): write or discard the queue.
public struct ATTExecuteWriteRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.executeWriteRequest

    /// The Flags field (Vol 3, Part F, Table 3.36); other values are reserved.
    public enum Flags: UInt8, Hashable, Sendable {
        /// 0x00: cancel all prepared writes.
        case cancel = 0x00
        /// 0x01: immediately write all pending prepared values.
        case write = 0x01
    }

    public var flags = Flags.cancel

    public init() {}

    public init(flags: Flags) { self.flags = flags }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&flags, field: "flags")
        try coder.end()
    }

    public var description: String { flags == .write ? "write" : "cancel" }
}

/// ATT_EXECUTE_WRITE_RSP (Core 6.0, Vol 3, Part F, 3.4.6.4). No parameters.
public struct ATTExecuteWriteResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.executeWriteResponse

    public init() {}

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.end()
    }

    public var description: String { "" }
}
