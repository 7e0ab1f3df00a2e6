import BluetoothCore

/// L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (Core 6.0, Vol 3, Part A, 4.20): a peripheral asks
/// the central for new connection parameters. Only a peripheral sends it; a central that
/// receives it from a central answers Command Reject "not understood" (Vol 3, Part A, 4.20).
///
/// Use ``violations`` (or ``isValid``) before forwarding the values to the controller.
public struct L2CAPConnectionParameterUpdateRequest: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.connectionParameterUpdateRequest

    /// Minimum connection interval, in units of 1.25 ms.
    public var intervalMin: UInt16 = 0
    /// Maximum connection interval, in units of 1.25 ms.
    public var intervalMax: UInt16 = 0
    /// Peripheral latency, in connection events.
    public var peripheralLatency: UInt16 = 0
    /// Supervision timeout, in units of 10 ms.
    public var timeoutMultiplier: UInt16 = 0

    public init() {}

    public init(intervalMin: UInt16, intervalMax: UInt16, peripheralLatency: UInt16, timeoutMultiplier: UInt16) {
        self.intervalMin = intervalMin
        self.intervalMax = intervalMax
        self.peripheralLatency = peripheralLatency
        self.timeoutMultiplier = timeoutMultiplier
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&intervalMin)
        try coder.uint16(&intervalMax)
        try coder.uint16(&peripheralLatency)
        try coder.uint16(&timeoutMultiplier)
        try coder.end()
    }

    public var description: String {
        "interval=\(intervalMin)…\(intervalMax) latency=\(peripheralLatency) timeout=\(timeoutMultiplier)"
    }
}

/// The Result of L2CAP_CONNECTION_PARAMETER_UPDATE_RSP (Core 6.0, Vol 3, Part A, 4.21).
public struct L2CAPConnectionParameterUpdateResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let accepted = L2CAPConnectionParameterUpdateResult(rawValue: 0x0000)
    public static let rejected = L2CAPConnectionParameterUpdateResult(rawValue: 0x0001)

    public var description: String {
        switch self {
        case .accepted: return "Connection Parameters accepted"
        case .rejected: return "Connection Parameters rejected"
        default: return "Reserved result \(Hex.format(rawValue, digits: 4))"
        }
    }
}

/// L2CAP_CONNECTION_PARAMETER_UPDATE_RSP (Core 6.0, Vol 3, Part A, 4.21): the central's answer.
public struct L2CAPConnectionParameterUpdateResponse: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.connectionParameterUpdateResponse

    public var result = L2CAPConnectionParameterUpdateResult.accepted

    public init() {}

    public init(result: L2CAPConnectionParameterUpdateResult) { self.result = result }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&result, field: "Result")
        try coder.end()
    }

    public var description: String { "\(result)" }
}
