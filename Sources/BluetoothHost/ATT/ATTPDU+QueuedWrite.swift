import BluetoothCore

/// ATT_PREPARE_WRITE_REQ (Core 6.0, Vol 3, Part F, 3.4.6.1): queue part of a value.
public struct ATTPrepareWriteRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.prepareWriteRequest

    public var handle: UInt16
    public var offset: UInt16
    public var partValue: [UInt8]

    public init(handle: UInt16, offset: UInt16, partValue: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.partValue = partValue
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        offset = try reader.readUInt16()
        partValue = reader.readRemaining()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(offset)
        writer.write(contentsOf: partValue)
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset) \(ATTWire.bytes(partValue))" }
}

/// ATT_PREPARE_WRITE_RSP (Core 6.0, Vol 3, Part F, 3.4.6.2): echoes the request so the
/// client can check the server received it intact.
public struct ATTPrepareWriteResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.prepareWriteResponse

    public var handle: UInt16
    public var offset: UInt16
    public var partValue: [UInt8]

    public init(handle: UInt16, offset: UInt16, partValue: [UInt8]) {
        self.handle = handle
        self.offset = offset
        self.partValue = partValue
    }

    /// The response that echoes `request`.
    public init(echoing request: ATTPrepareWriteRequest) {
        self.init(handle: request.handle, offset: request.offset, partValue: request.partValue)
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        offset = try reader.readUInt16()
        partValue = reader.readRemaining()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(offset)
        writer.write(contentsOf: partValue)
    }

    public var description: String { "\(ATTWire.hex(handle)) offset \(offset) \(ATTWire.bytes(partValue))" }
}

/// ATT_EXECUTE_WRITE_REQ (Core 6.0, Vol 3, Part F, 3.4.6.3): write or discard the queue.
public struct ATTExecuteWriteRequest: ATTPDUParameters {
    public static let opcode = ATTOpcode.executeWriteRequest

    /// The Flags field (Vol 3, Part F, Table 3.36); other values are reserved.
    public enum Flags: UInt8, Hashable, Sendable {
        /// 0x00: cancel all prepared writes.
        case cancel = 0x00
        /// 0x01: immediately write all pending prepared values.
        case write = 0x01
    }

    public var flags: Flags

    public init(flags: Flags) { self.flags = flags }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        let raw = try reader.readUInt8()
        guard let flags = Flags(rawValue: raw) else {
            throw .invalidValue(context: reader.context, field: "flags", value: UInt64(raw))
        }
        self.flags = flags
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) { writer.write(flags.rawValue) }

    public var description: String { flags == .write ? "write" : "cancel" }
}

/// ATT_EXECUTE_WRITE_RSP (Core 6.0, Vol 3, Part F, 3.4.6.4). No parameters.
public struct ATTExecuteWriteResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.executeWriteResponse

    public init() {}

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try reader.expectEnd() }

    public func encodeParameters(into writer: inout ByteWriter) {}

    public var description: String { "" }
}
