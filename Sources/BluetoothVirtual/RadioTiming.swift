/// Timing rules of the LE link layer that the simulation follows, as plain functions.
enum RadioTiming {
    /// One unit of advertising and scanning intervals: 0.625 ms.
    static func slots(_ units: UInt16) -> Duration { .microseconds(625 * Int(units)) }

    /// One unit of connection intervals: 1.25 ms.
    static func connectionIntervalUnits(_ units: UInt16) -> Duration { .microseconds(1250 * Int(units)) }

    /// One unit of supervision timeouts and scan durations: 10 ms.
    static func tenMilliseconds(_ units: UInt16) -> Duration { .milliseconds(10 * Int(units)) }

    /// advDelay, a pseudo-random 0-10 ms added to every advertising interval so that
    /// advertisers do not collide for ever (Core 6.0, Vol 6, Part B, 4.4.2.2.1).
    static func advertisingDelay(using random: inout some RandomNumberGenerator) -> Duration {
        .microseconds(Int.random(in: 0...10_000, using: &random))
    }

    /// High duty cycle directed advertising repeats every 3.75 ms or less and stops after
    /// 1.28 s (Core 6.0, Vol 6, Part B, 4.4.2.4.3).
    static let highDutyCycleInterval: Duration = .microseconds(3750)
    static let highDutyCycleDuration: Duration = .milliseconds(1280)

    /// The first connection event follows CONNECT_IND after transmitWindowDelay (1.25 ms)
    /// plus the transmit window offset (Core 6.0, Vol 6, Part B, 4.5.3); the simulation uses
    /// a zero offset.
    static let connectionSetupDelay: Duration = .microseconds(1250)

    /// A connection that receives nothing in its first 6 connection events fails with
    /// Connection Failed to be Established (Core 6.0, Vol 6, Part B, 4.5.2).
    static let establishmentEventCount = 6

    /// The instant of a connection update or PHY update: a few events ahead, as controllers
    /// choose it (at least 6 for a central, Core 6.0, Vol 6, Part B, 5.1.1).
    static let procedureInstantOffset = 6

    /// Events an LL request/response procedure (features, version, data length) takes.
    static let exchangeEventCount = 2

    /// Encryption start (Core 6.0, Vol 6, Part B, 5.1.3.1), in events after the next one:
    /// LL_ENC_REQ goes in the next event, after one more on a restart, which first pauses
    /// (LL_PAUSE_ENC_REQ / LL_PAUSE_ENC_RSP, 5.1.3.2). Once the peripheral's host has the key,
    /// LL_ENC_RSP and LL_START_ENC_REQ go in the next event and the two LL_START_ENC_RSP in
    /// the one after. A rejection (LL_REJECT_EXT_IND) goes in the next event.
    static let encryptionPauseEvents = 1
    static let encryptionStartEvents = 1

    /// The time an LL data PDU of `octets` payload takes on the LE 1M PHY: preamble, access
    /// address, header, MIC-less payload and CRC, 8 µs per octet (Core 6.0, Vol 6, Part B, 4.5.10).
    static func transmitTime(octets: UInt16, phy: Double = 1) -> UInt16 {
        UInt16(Double((Int(octets) + 14) * 8) / phy)
    }
}

/// When a scanner listens: `window` out of every `interval`, starting when it was enabled
/// (Core 6.0, Vol 6, Part B, 4.4.3). A window equal to the interval listens continuously.
struct ScanSchedule: Sendable, Equatable {
    var start: Duration
    var interval: Duration
    var window: Duration

    func isListening(at time: Duration) -> Bool {
        guard interval > .zero, (window < interval) else { return time >= start }
        guard time >= start else { return false }
        let elapsed = time - start
        let intervalNanoseconds = Self.nanoseconds(interval)
        let offset = Self.nanoseconds(elapsed) % intervalNanoseconds
        return offset < Self.nanoseconds(window)
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
