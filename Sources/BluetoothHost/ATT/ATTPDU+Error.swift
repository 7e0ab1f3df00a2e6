import BluetoothCore

/// ATT_ERROR_RSP (Core 6.0, Vol 3, Part F, 3.4.1.1): a request could not be performed.
/// Commands never get one.
public struct ATTErrorResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.errorResponse

    /// The opcode of the request that failed.
    public var requestOpcode = ATTOpcode(rawValue: 0)
    /// The handle in the request that caused the error, or 0x0000.
    public var handle: UInt16 = 0
    public var code = ATTErrorCode(rawValue: 0)

    public init() {}

    public init(requestOpcode: ATTOpcode, handle: UInt16, code: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.code = code
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&requestOpcode, field: "Request Opcode In Error")
        try coder.uint16(&handle)
        try coder.uint8(&code, field: "Error Code")
        try coder.end()
    }

    /// The error as a Swift `Error`.
    public var error: ATTError { ATTError(self) }

    public var description: String { error.description }
}
