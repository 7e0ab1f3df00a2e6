/// Connection parameters an app asks for once connected, in either role: an interval range,
/// a peripheral latency and a supervision timeout, or one of the presets.
///
/// The presets are Android's `BluetoothGatt.requestConnectionPriority` values (AOSP's
/// defaults), with a 5 s supervision timeout, which also keeps within Apple's accessory
/// guidelines for the timeout (2 s to 6 s, more than three times interval × (latency + 1)):
///
/// | preset        | interval          | latency | timeout |
/// |---------------|-------------------|---------|---------|
/// | `.lowLatency` | 11.25 ms ... 15 ms | 0       | 5 s     |
/// | `.balanced`   | 30 ms ... 50 ms    | 0       | 5 s     |
/// | `.lowPower`   | 100 ms ... 125 ms  | 2       | 5 s     |
///
/// ```swift
/// let now = try await connection.updateParameters(.lowLatency)
/// let custom = ConnectionParameterPreference(intervalMilliseconds: 30...45, peripheralLatency: 4, supervisionTimeoutMilliseconds: 6_000)
/// ```
public struct ConnectionParameterPreference: Sendable, Hashable, CustomStringConvertible {
    /// Acceptable connection intervals, in units of 1.25 ms (6...3200: 7.5 ms to 4 s).
    public var intervalRange: ClosedRange<UInt16>
    /// How many connection events the peripheral may skip (0...499).
    public var peripheralLatency: UInt16
    /// Supervision timeout, in units of 10 ms (10...3200: 100 ms to 32 s).
    public var supervisionTimeout: UInt16

    public init(intervalRange: ClosedRange<UInt16>, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.intervalRange = intervalRange
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    /// The same in milliseconds: intervals are rounded down to 1.25 ms steps, the timeout
    /// to 10 ms steps (values past the field saturate and are then refused as invalid).
    public init(intervalMilliseconds: ClosedRange<Double>, peripheralLatency: UInt16, supervisionTimeoutMilliseconds: Int) {
        func units(_ milliseconds: Double, _ unit: Double) -> UInt16 {
            let value = (milliseconds / unit).rounded(.down)
            guard value.isFinite, value > 0 else { return 0 }
            return value >= Double(UInt16.max) ? UInt16.max : UInt16(value)
        }
        let lower = units(intervalMilliseconds.lowerBound, 1.25)
        let upper = max(lower, units(intervalMilliseconds.upperBound, 1.25))
        self.init(intervalRange: lower...upper, peripheralLatency: peripheralLatency,
                  supervisionTimeout: units(Double(supervisionTimeoutMilliseconds), 10))
    }

    /// Short intervals for quick exchanges (Android's CONNECTION_PRIORITY_HIGH):
    /// 11.25 ms to 15 ms, no latency, 5 s timeout.
    public static let lowLatency = ConnectionParameterPreference(intervalRange: 9...12, peripheralLatency: 0, supervisionTimeout: 500)
    /// The usual trade-off (Android's CONNECTION_PRIORITY_BALANCED): 30 ms to 50 ms, no
    /// latency, 5 s timeout.
    public static let balanced = ConnectionParameterPreference(intervalRange: 24...40, peripheralLatency: 0, supervisionTimeout: 500)
    /// Long intervals and latency 2 to save power (Android's CONNECTION_PRIORITY_LOW_POWER):
    /// 100 ms to 125 ms, 5 s timeout.
    public static let lowPower = ConnectionParameterPreference(intervalRange: 80...100, peripheralLatency: 2, supervisionTimeout: 500)

    public var description: String {
        "interval \(Double(intervalRange.lowerBound) * 1.25)...\(Double(intervalRange.upperBound) * 1.25) ms, latency \(peripheralLatency), timeout \(Int(supervisionTimeout) * 10) ms"
    }
}
