import BluetoothCore

/// ATT_ERROR_RSP (Core 6.0, Vol 3, Part F, 3.4.1.1): a request could not be performed.
/// Commands never get one.
public struct ATTErrorResponse: ATTPDUParameters {
    public static let opcode = ATTOpcode.errorResponse

    /// The opcode of the request that failed.
    public var requestOpcode: ATTOpcode
    /// The handle in the request that caused the error, or 0x0000.
    public var handle: UInt16
    public var code: ATTErrorCode

    public init(requestOpcode: ATTOpcode, handle: UInt16, code: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.code = code
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        requestOpcode = ATTOpcode(rawValue: try reader.readUInt8())
        handle = try reader.readUInt16()
        code = ATTErrorCode(rawValue: try reader.readUInt8())
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(requestOpcode.rawValue)
        writer.write(handle)
        writer.write(code.rawValue)
    }

    /// The error as a Swift `Error`.
    public var error: ATTError { ATTError(self) }

    public var description: String { error.description }
}
