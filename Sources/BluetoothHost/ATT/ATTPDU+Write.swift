import BluetoothCore

/// ATT_WRITE_REQ (Core 6.0, Vol 3, Part F, 3.4.5.1): write a value and get a Write Response.
public struct ATTWriteRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.writeRequest

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

/// ATT_WRITE_RSP (Core 6.0, Vol 3, Part F, 3.4.5.2): the write was done. No parameters.
public struct ATTWriteResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.writeResponse

    public init() {}

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.end()
    }

    public var description: String { "" }
}

/// ATT_WRITE_CMD (Core 6.0, Vol 3, Part F, 3.4.5.3): write without response. The server
/// ignores a command it cannot carry out.
public struct ATTWriteCommand: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.writeCommand

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

/// ATT_SIGNED_WRITE_CMD (Core 6.0, Vol 3, Part F, 3.4.5.4): a write command followed by a
/// 12-octet Authentication Signature, made of the SignCounter (4 octets) and the 64-bit MAC
/// (8 octets), both least significant octet first (Vol 3, Part H, 2.4.5).
///
/// The signature covers the opcode, handle and value; computing and checking it is the
/// Security Manager's job, not this codec's.
public struct ATTSignedWriteCommand: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.signedWriteCommand
    /// The size of the Authentication Signature.
    public static let signatureLength = 12

    public var handle: UInt16 = 0
    public var value: [UInt8] = []
    public var signCounter: UInt32 = 0
    public var mac: UInt64 = 0

    public init() {}

    public init(handle: UInt16, value: [UInt8], signCounter: UInt32, mac: UInt64) {
        self.handle = handle
        self.value = value
        self.signCounter = signCounter
        self.mac = mac
    }

    /// The 12 signature octets as on the wire.
    public var authenticationSignature: [UInt8] {
        var writer = ByteWriter(capacity: Self.signatureLength)
        writer.write(signCounter)
        writer.write(mac)
        return writer.bytes
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&handle)
        try coder.rest(&value, leaving: Self.signatureLength)
        try coder.uint32(&signCounter)
        try coder.uint64(&mac)
    }

    public var description: String {
        "\(ATTWire.hex(handle))=\(ATTWire.bytes(value)) counter=\(signCounter) MAC=\(Hex.format(mac, digits: 16))"
    }
}
