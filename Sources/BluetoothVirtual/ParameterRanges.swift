import BluetoothHCI

/// The ranges the specification allows for command parameters; a value outside them gets
/// Invalid HCI Command Parameters (0x12).
enum ParameterRanges {
    /// LE_Scan_Interval and LE_Scan_Window of legacy scanning and initiating: 2.5 ms to
    /// 10.24 s, window ≤ interval (Core 6.0, Vol 4, Part E, 7.8.10, 7.8.12).
    static func legacyScan(interval: UInt16, window: UInt16) -> Bool {
        (0x0004...0x4000).contains(interval) && (0x0004...0x4000).contains(window) && window <= interval
    }

    /// Scan_Interval and Scan_Window of extended scanning and initiating (7.8.64, 7.8.66).
    static func extendedScan(interval: UInt16, window: UInt16) -> Bool {
        interval >= 0x0004 && window >= 0x0004 && window <= interval
    }

    /// Connection_Interval_Min/Max, Max_Latency and Supervision_Timeout (7.8.12, 7.8.18):
    /// interval 7.5 ms to 4 s, latency ≤ 499, timeout 100 ms to 32 s and longer than
    /// (1 + latency) × interval_max × 2.
    static func connection(intervalMin: UInt16, intervalMax: UInt16, latency: UInt16, timeout: UInt16) -> Bool {
        guard (0x0006...0x0C80).contains(intervalMin), (0x0006...0x0C80).contains(intervalMax), intervalMin <= intervalMax,
              latency <= 0x01F3, (0x000A...0x0C80).contains(timeout) else { return false }
        // timeout × 10 ms > (1 + latency) × interval_max × 1.25 ms × 2, in units of 0.25 ms.
        return Int(timeout) * 40 > (1 + Int(latency)) * Int(intervalMax) * 10
    }

    /// Advertising_Interval_Min/Max of undirected and low duty cycle directed advertising:
    /// 20 ms to 10.24 s (7.8.5).
    static func advertising(intervalMin: UInt16, intervalMax: UInt16) -> Bool {
        (0x0020...0x4000).contains(intervalMin) && (0x0020...0x4000).contains(intervalMax) && intervalMin <= intervalMax
    }

    /// TX octets 27-251 and TX time 328-17040 µs (7.8.33, 7.8.35).
    static func dataLength(octets: UInt16, time: UInt16) -> Bool {
        (0x001B...0x00FB).contains(octets) && (0x0148...0x4290).contains(time)
    }

    /// The reasons Disconnect accepts (7.1.6).
    static let disconnectReasons: Set<HCIStatus> = [
        .authenticationFailure, .remoteUserTerminatedConnection, .remoteDeviceTerminatedLowResources,
        .remoteDeviceTerminatedPowerOff, .unsupportedRemoteFeature, .pairingWithUnitKeyNotSupported,
        .unacceptableConnectionParameters,
    ]
}
