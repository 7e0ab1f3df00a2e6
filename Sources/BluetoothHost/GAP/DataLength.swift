/// The longest LL data PDU payloads of a connection and their air time, each way (LE Data
/// Length Change, Core 6.0, Vol 4, Part E, 7.7.65.7).
public struct DataLength: Sendable, Hashable, CustomStringConvertible {
    /// The longest payload this device sends, in octets (27...251).
    public var maxTxOctets: UInt16
    /// The longest time this device transmits one PDU, in microseconds.
    public var maxTxTime: UInt16
    /// The longest payload this device receives, in octets.
    public var maxRxOctets: UInt16
    /// The longest time this device receives one PDU, in microseconds.
    public var maxRxTime: UInt16

    public init(maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.maxTxOctets = maxTxOctets
        self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets
        self.maxRxTime = maxRxTime
    }

    /// What every connection starts with: 27 octets, 328 µs each way (Core 6.0, Vol 6,
    /// Part B, 4.5.10).
    public static let initial = DataLength(maxTxOctets: 27, maxTxTime: 328, maxRxOctets: 27, maxRxTime: 328)

    /// The range LE Set Data Length accepts for TX octets (Core 6.0, Vol 4, Part E, 7.8.33).
    public static let octetRange: ClosedRange<UInt16> = 27...251
    /// The range LE Set Data Length accepts for TX time, in microseconds.
    public static let timeRange: ClosedRange<UInt16> = 328...17040

    public var description: String { "tx \(maxTxOctets) octets/\(maxTxTime) µs, rx \(maxRxOctets) octets/\(maxRxTime) µs" }
}
