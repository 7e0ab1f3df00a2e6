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
/// attempt would start afresh every time, so the failures that gave a guess at a secret (a
/// Passkey Entry pairing's, ``PairingProcedure/gaveGuessAtSecret``) are also counted across
/// all peers: after ``SecurityManagerSettings/failedPairingBudget`` of them within
/// ``SecurityManagerSettings/failedPairingWindow``, a pairing with anyone that would use Passkey
/// Entry fails with Repeated Attempts as its method is chosen, until the oldest of them leaves
/// the window (``passkeyEntryWait(now:settings:running:)``). The Passkey Entry pairings still
/// running count as failures to come, so that pairings run at once on several links cannot
/// each pass a budget that one guess is left of. Guessing thus costs the attacker the
/// window. The other methods stay open meanwhile: an attacker can fail Passkey Entry pairings on
/// purpose as easily as it can guess, and closing every pairing for that would let it stop
/// everyone's. Failures that gave no guess (Just Works, Numeric Comparison, OOB, a Pairing
/// Failed before a passkey) count only against their claimant; a link that ends mid-pairing
/// counts only when a passkey was in play.
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
    func wait(for claimant: DeviceAddress, now: BluetoothClock.Instant) -> Duration? {
        guard let backoff = byClaimant[Self.key(claimant)], now < backoff.notBefore else { return nil }
        return backoff.notBefore - now
    }

    /// How long no Passkey Entry pairing may run with anyone, the budget of guesses across all
    /// peers being spent by the failures within the window and the `running` Passkey Entry
    /// pairings (each may yet fail); `nil` when one may.
    func passkeyEntryWait(now: BluetoothClock.Instant, settings: SecurityManagerSettings, running: Int = 0) -> Duration? {
        guard settings.failedPairingBudget > 0 else { return nil }
        let recent = recentFailures.filter { now < $0 + settings.failedPairingWindow }
        let excess = recent.count + running - settings.failedPairingBudget
        guard excess >= 0 else { return nil }
        // Open again once `excess + 1` of the failures have left the window; while the running
        // pairings alone fill the budget, a window from now is the hint.
        guard excess < recent.count else { return settings.failedPairingWindow }
        return recent[recent.startIndex + excess] + settings.failedPairingWindow - now
    }

    /// A pairing with `claimant` failed: its interval doubles (up to the maximum), and, when it
    /// gave a guess at a secret, the failure counts against the budget across all peers.
    mutating func failed(_ claimant: DeviceAddress, gaveGuessAtSecret: Bool, now: BluetoothClock.Instant, settings: SecurityManagerSettings) {
        let key = Self.key(claimant)
        let interval = byClaimant[key].map { min($0.interval * 2, settings.maximumRetryInterval) } ?? settings.initialRetryInterval
        byClaimant[key] = Backoff(interval: interval, notBefore: now + interval)
        if byClaimant.count > Self.claimantLimit, let soonest = byClaimant.min(by: { $0.value.notBefore < $1.value.notBefore })?.key {
            byClaimant[soonest] = nil
        }
        guard gaveGuessAtSecret, settings.failedPairingBudget > 0 else { return }
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
