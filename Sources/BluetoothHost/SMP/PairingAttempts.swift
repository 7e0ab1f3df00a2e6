import BluetoothCore
import DequeModule

/// Repeated Attempts (Core 6.0, Vol 3, Part H, 2.3.6): after a pairing fails, a waiting
/// interval passes before this device starts or accepts another with the same claimant, and
/// each further failure doubles it. A state machine with no I/O; the host feeds it failures,
/// successes and the time.
///
/// The spec keys the interval by "a device claiming the same identity": here the peer's
/// identity when the host knows one (its address resolved with a bond's IRK, or an identity
/// address), else its address over the air. A peer that takes a new random address for each
/// attempt would start afresh every time, so failures are also counted across all peers:
/// after ``SecurityManagerSettings/failedPairingBudget`` failures within
/// ``SecurityManagerSettings/failedPairingWindow``, no pairing is started or accepted with
/// anyone until the oldest of them leaves the window. A flood of failures thus costs the
/// attacker the window, and other peers wait at most that long.
struct PairingAttempts {
    struct Backoff {
        var interval: Duration
        var notBefore: BluetoothClock.Instant
    }

    /// The back-off of each claimant, by identity or address (base type); bounded.
    private(set) var byClaimant: [DeviceAddress: Backoff] = [:]
    /// When the latest failures happened, oldest first; at most the budget.
    private(set) var recentFailures: Deque<BluetoothClock.Instant> = []
    /// Claimants remembered at most: beyond it the one whose wait ends first is forgotten.
    static let claimantLimit = 256

    /// How long `claimant` must still wait before a pairing with it, or `nil` when it may pair.
    func wait(for claimant: DeviceAddress, now: BluetoothClock.Instant, settings: SecurityManagerSettings) -> Duration? {
        var until: BluetoothClock.Instant?
        if let backoff = byClaimant[Self.key(claimant)], now < backoff.notBefore { until = backoff.notBefore }
        if settings.failedPairingBudget > 0, recentFailures.count >= settings.failedPairingBudget, let oldest = recentFailures.first {
            let end = oldest + settings.failedPairingWindow
            if now < end { until = max(until ?? end, end) }
        }
        return until.map { $0 - now }
    }

    /// A pairing with `claimant` failed: its interval doubles (up to the maximum), and the
    /// failure counts against the budget.
    mutating func failed(_ claimant: DeviceAddress, now: BluetoothClock.Instant, settings: SecurityManagerSettings) {
        let key = Self.key(claimant)
        let interval = byClaimant[key].map { min($0.interval * 2, settings.maximumRetryInterval) } ?? settings.initialRetryInterval
        byClaimant[key] = Backoff(interval: interval, notBefore: now + interval)
        if byClaimant.count > Self.claimantLimit, let soonest = byClaimant.min(by: { $0.value.notBefore < $1.value.notBefore })?.key {
            byClaimant[soonest] = nil
        }
        guard settings.failedPairingBudget > 0 else { return }
        recentFailures.append(now)
        while recentFailures.count > settings.failedPairingBudget { recentFailures.removeFirst() }
    }

    /// A pairing with `claimant` succeeded: its interval starts over (the global count stays).
    mutating func succeeded(_ claimant: DeviceAddress) {
        byClaimant[Self.key(claimant)] = nil
    }

    /// Identity address types count as their base type.
    private static func key(_ address: DeviceAddress) -> DeviceAddress {
        DeviceAddress(address.address, type: address.type.base)
    }
}
