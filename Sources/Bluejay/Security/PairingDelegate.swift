import BluetoothCore
import BluetoothHost
import Dispatch
import Synchronization

/// The app's side of pairing, in the style of Bluejay's observers: Bluejay holds the delegate
/// weakly and calls it on the callback queue. Answer a question through its `reply` whenever
/// the user has (once). The pairing method follows from
/// `BluetoothHost/SecurityManagerSettings/ioCapability` in
/// ``StartOptions/hostConfiguration``.
///
/// An `async` program may give the host a `BluetoothHost/PairingAgent` instead
/// (``Bluejay/setPairingAgent(_:)``).
public protocol PairingDelegate: AnyObject, Sendable {
    /// A peripheral asks to pair (a Security Request). Reply `false` to refuse.
    func pairingRequested(by peripheral: PeripheralIdentifier, reply: @escaping @Sendable (Bool) -> Void)
    /// Show `passkey` (six digits) so the user types it on the peripheral.
    func display(passkey: String, for peripheral: PeripheralIdentifier)
    /// Ask the user for the passkey the peripheral shows; reply `nil` to cancel.
    func passkeyRequested(for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (UInt32?) -> Void)
    /// Ask whether the peripheral shows the same six digits.
    func confirm(number: String, for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (Bool) -> Void)
    /// The peripheral's user pressed a key while typing the passkey shown by ``display(passkey:for:)``
    /// (a Keypress Notification): show the progress. Only when both sides asked for them
    /// (`BluetoothHost/SecurityManagerSettings/keypressNotifications`).
    func keypress(_ type: SMPKeypressNotificationType, for peripheral: PeripheralIdentifier)
    /// A pairing would replace the bond with a peripheral by a weaker key ("pair again?"):
    /// reply `true` to allow it. Anybody can claim a bonded identity
    /// (`BluetoothHost/BondReplacement/isClaimedIdentity`), so allow it only when the user
    /// knows the device lost its keys. The default refuses and the bond is kept.
    func shouldReplaceBond(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (Bool) -> Void)
    /// A pairing replaced the bond stored under `replacement.identity`.
    func bondReplaced(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier)
    /// A pairing ended.
    func pairingFinished(with peripheral: PeripheralIdentifier, result: Result<LinkSecurity, BluejayError>)
}

extension PairingDelegate {
    public func pairingRequested(by peripheral: PeripheralIdentifier, reply: @escaping @Sendable (Bool) -> Void) { reply(true) }
    public func display(passkey: String, for peripheral: PeripheralIdentifier) {}
    public func passkeyRequested(for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (UInt32?) -> Void) { reply(nil) }
    public func confirm(number: String, for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (Bool) -> Void) { reply(false) }
    public func keypress(_ type: SMPKeypressNotificationType, for peripheral: PeripheralIdentifier) {}
    public func shouldReplaceBond(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier,
                                  reply: @escaping @Sendable (Bool) -> Void) { reply(false) }
    public func bondReplaced(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier) {}
    public func pairingFinished(with peripheral: PeripheralIdentifier, result: Result<LinkSecurity, BluejayError>) {}
}

/// The host's ``PairingAgent`` for a ``PairingDelegate``: each question goes to the delegate
/// on the callback queue and waits for its reply. A delegate that is gone answers as a device
/// without input or output would.
struct DelegatePairingAgent: PairingAgent {
    private struct Box: @unchecked Sendable {
        // The delegate is Sendable and class-bound; held weakly as Bluejay holds observers.
        weak var delegate: (any PairingDelegate)?
    }

    private let box: Box
    let queue: DispatchQueue

    init(delegate: any PairingDelegate, queue: DispatchQueue) {
        box = Box(delegate: delegate)
        self.queue = queue
    }

    /// How long a question waits for the delegate's reply before the fallback answer: longer
    /// than the Security Manager Timer (30 s), which fails the pairing first, so that a
    /// delegate that never replies leaves no task waiting.
    static let replyLimit: DispatchTimeInterval = .seconds(60)

    private func ask<T: Sendable>(_ fallback: T, _ question: @escaping @Sendable (any PairingDelegate, @escaping @Sendable (T) -> Void) -> Void) async -> T {
        guard let delegate = box.delegate else { return fallback }
        return await withCheckedContinuation { continuation in
            let reply = OneShotReply(continuation)
            queue.async { question(delegate) { reply.resume($0) } }
            queue.asyncAfter(deadline: .now() + Self.replyLimit) { reply.resume(fallback) }
        }
    }

    func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool {
        await ask(true) { $0.pairingRequested(by: PeripheralIdentifier(address: peer), reply: $1) }
    }

    func display(passkey: UInt32, for peer: DeviceAddress) async {
        guard let delegate = box.delegate else { return }
        queue.async { delegate.display(passkey: PairingPrompt.sixDigits(passkey), for: PeripheralIdentifier(address: peer)) }
    }

    func passkey(for peer: DeviceAddress) async -> UInt32? {
        await ask(nil) { $0.passkeyRequested(for: PeripheralIdentifier(address: peer), reply: $1) }
    }

    func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
        await ask(false) { $0.confirm(number: PairingPrompt.sixDigits(number), for: PeripheralIdentifier(address: peer), reply: $1) }
    }

    func keypress(_ type: SMPKeypressNotificationType, for peer: DeviceAddress) async {
        guard let delegate = box.delegate else { return }
        queue.async { delegate.keypress(type, for: PeripheralIdentifier(address: peer)) }
    }

    func shouldReplaceBond(_ replacement: BondReplacement, for peer: DeviceAddress) async -> Bool {
        await ask(false) { $0.shouldReplaceBond(replacement, for: PeripheralIdentifier(address: peer), reply: $1) }
    }

    func bondReplaced(_ replacement: BondReplacement, for peer: DeviceAddress) async {
        guard let delegate = box.delegate else { return }
        queue.async { delegate.bondReplaced(replacement, for: PeripheralIdentifier(address: peer)) }
    }

    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {
        guard let delegate = box.delegate else { return }
        let mapped = result.map(\.security).mapError { BluejayError(HostError.pairingFailed($0)) }
        queue.async { delegate.pairingFinished(with: PeripheralIdentifier(address: peer), result: mapped) }
    }
}

/// A reply the delegate may call more than once, or never: the first call counts.
private final class OneShotReply<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, Never>?>

    init(_ continuation: CheckedContinuation<T, Never>) {
        self.continuation = Mutex(continuation)
    }

    func resume(_ value: T) {
        continuation.withLock { pending in
            pending?.resume(returning: value)
            pending = nil
        }
    }
}
