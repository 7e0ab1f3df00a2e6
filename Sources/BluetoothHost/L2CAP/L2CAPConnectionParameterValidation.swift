/// Why a set of LE connection parameters is not acceptable.
///
/// The ranges are those of L2CAP_CONNECTION_PARAMETER_UPDATE_REQ (Core 6.0, Vol 3, Part A,
/// 4.20) and of HCI_LE_Connection_Update (Vol 4, Part E, 7.8.18, same ranges as 7.8.12),
/// which is what the central sends to its controller after accepting.
public enum L2CAPConnectionParameterViolation: Hashable, Sendable, CustomStringConvertible {
    /// Interval Min outside 6…3200 (7.5 ms … 4 s).
    case intervalMinOutOfRange(UInt16)
    /// Interval Max outside 6…3200 (7.5 ms … 4 s).
    case intervalMaxOutOfRange(UInt16)
    /// Interval Min greater than Interval Max.
    case intervalMinAboveMax(min: UInt16, max: UInt16)
    /// Peripheral latency of 500 or more.
    case peripheralLatencyOutOfRange(UInt16)
    /// Timeout multiplier outside 10…3200 (100 ms … 32 s).
    case timeoutOutOfRange(UInt16)
    /// The supervision timeout is not larger than (1 + latency) × Interval Max × 2.
    case timeoutTooShort(timeoutMultiplier: UInt16, peripheralLatency: UInt16, intervalMax: UInt16)

    public var description: String {
        switch self {
        case let .intervalMinOutOfRange(value): return "Interval Min \(value) is outside 6…3200 (units of 1.25 ms)"
        case let .intervalMaxOutOfRange(value): return "Interval Max \(value) is outside 6…3200 (units of 1.25 ms)"
        case let .intervalMinAboveMax(min, max): return "Interval Min \(min) is greater than Interval Max \(max)"
        case let .peripheralLatencyOutOfRange(value): return "peripheral latency \(value) is not less than 500"
        case let .timeoutOutOfRange(value): return "timeout multiplier \(value) is outside 10…3200 (units of 10 ms)"
        case let .timeoutTooShort(timeout, latency, max):
            return "supervision timeout \(Int(timeout) * 10) ms is not larger than (1 + \(latency)) × \(Double(max) * 1.25) ms × 2"
        }
    }
}

extension L2CAPConnectionParameterUpdateRequest {
    /// Interval Min / Max range, in units of 1.25 ms (Vol 3, Part A, 4.20).
    public static let intervalRange: ClosedRange<UInt16> = 6...3200
    /// Peripheral latency range (Vol 3, Part A, 4.20: "shall be less than 500").
    public static let peripheralLatencyRange: ClosedRange<UInt16> = 0...499
    /// Timeout multiplier range, in units of 10 ms (Vol 3, Part A, 4.20).
    public static let timeoutMultiplierRange: ClosedRange<UInt16> = 10...3200

    /// Every rule the request breaks; empty when the central may accept it. A central answers a
    /// request with violations with ``L2CAPConnectionParameterUpdateResult/rejected``.
    public var violations: [L2CAPConnectionParameterViolation] {
        var found: [L2CAPConnectionParameterViolation] = []
        if !Self.intervalRange.contains(intervalMin) { found.append(.intervalMinOutOfRange(intervalMin)) }
        if !Self.intervalRange.contains(intervalMax) { found.append(.intervalMaxOutOfRange(intervalMax)) }
        if intervalMin > intervalMax { found.append(.intervalMinAboveMax(min: intervalMin, max: intervalMax)) }
        if !Self.peripheralLatencyRange.contains(peripheralLatency) {
            found.append(.peripheralLatencyOutOfRange(peripheralLatency))
        }
        if !Self.timeoutMultiplierRange.contains(timeoutMultiplier) { found.append(.timeoutOutOfRange(timeoutMultiplier)) }
        // Vol 4, Part E, 7.8.12: Supervision_Timeout (ms) > (1 + Max_Latency) × Interval_Max (ms) × 2.
        // With timeout × 10 ms and interval × 1.25 ms this is timeout × 4 > (1 + latency) × interval.
        // (Vol 3, Part A, 4.20 states the same bound as latency ≤ timeout / (intervalMax × 2) − 1;
        // the strict HCI form is used so the controller never refuses what the host accepted.)
        if UInt64(timeoutMultiplier) * 4 <= (1 + UInt64(peripheralLatency)) * UInt64(intervalMax) {
            found.append(.timeoutTooShort(timeoutMultiplier: timeoutMultiplier, peripheralLatency: peripheralLatency,
                                          intervalMax: intervalMax))
        }
        return found
    }

    /// Whether the parameters satisfy every rule (``violations`` is empty).
    public var isValid: Bool { violations.isEmpty }
}
