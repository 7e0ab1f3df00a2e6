import BluetoothCore
/// The peer answered an ATT request with an Error Response (Core 6.0, Vol 3, Part F, 3.4.1.1).
///
/// The description names the error, the request and the handle, e.g.
/// `"Read Not Permitted (0x02) for Read Request on handle 0x0012"`.
public struct ATTError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The opcode of the request that failed.
    public var requestOpcode: ATTOpcode
    /// The handle the server blamed; 0x0000 when the request had none or is not supported.
    public var handle: UInt16
    public var code: ATTErrorCode

    public init(requestOpcode: ATTOpcode, handle: UInt16, code: ATTErrorCode) {
        self.requestOpcode = requestOpcode
        self.handle = handle
        self.code = code
    }

    /// The error an Error Response reports.
    public init(_ response: ATTErrorResponse) {
        self.init(requestOpcode: response.requestOpcode, handle: response.handle, code: response.code)
    }

    public var description: String {
        "\(code) for \(requestOpcode.name) on handle \(Hex.format(handle, digits: 4))"
    }
}
