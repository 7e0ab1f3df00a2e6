import BluetoothCore
import BluetoothHost

/// Pairing and bonds (Core 6.0, Vol 3, Part H): encrypt the link to the connected peripheral,
/// pair with it, and manage the keys kept in ``BluetoothHost/HostConfiguration/bondStore``.
///
/// ```swift
/// bluejay.register(pairingDelegate: self)        // passkeys and numeric comparison
/// bluejay.pair { result in print(result) }       // or: try await bluejay.pair()
/// ```
///
/// A read or write refused with Insufficient Authentication or Insufficient Encryption raises
/// the link's security by itself and is tried once more, as on iOS
/// (``StartOptions/raisesSecurityAutomatically``).
extension Bluejay {
    /// Sets the delegate that answers pairing questions on the callback queue (held weakly).
    public func register(pairingDelegate: any PairingDelegate) {
        let queue = state.withLock { $0.callbackQueue }
        setPairingAgent(DelegatePairingAgent(delegate: pairingDelegate, queue: queue))
    }

    /// Sets the host's `PairingAgent` (the `async` form of ``PairingDelegate``).
    public func setPairingAgent(_ agent: any PairingAgent) {
        let host = state.withLock { state -> (any CentralBackend)? in
            state.pairingAgent = agent
            return state.backend
        }
        if let host { Task { await host.setPairingAgent(agent) } }
    }

    /// The connected link's security, `nil` when not connected.
    public var linkSecurity: LinkSecurity? { state.withLock { $0.connectedLink?.connection.security } }

    /// Pairs with the connected peripheral now, as a queued operation, even if a bond exists.
    /// With `authenticated`, MITM protection is required: a pairing that cannot give it (Just
    /// Works) fails with a typed error and replaces no bond.
    public func pair(authenticated: Bool = false, completion: @escaping @Sendable (Result<LinkSecurity, BluejayError>) -> Void) {
        submitGATT("pair", work: { link in try await link.pair(authenticated: authenticated) }, deliver: onCallbackQueue(completion))
    }

    /// Pairs with the connected peripheral now, as a queued operation, even if a bond exists.
    /// With `authenticated`, MITM protection is required: a pairing that cannot give it (Just
    /// Works) fails with a typed error and replaces no bond.
    @discardableResult
    public func pair(authenticated: Bool = false) async throws(BluejayError) -> LinkSecurity {
        try await performGATT("pair") { link in try await link.pair(authenticated: authenticated) }
    }

    /// Encrypts the link to the connected peripheral: with the bond's keys when there is a
    /// bond, else by pairing. Returns at once when the link already is (authenticated, if asked).
    /// With `authenticated`, a link without MITM protection is a typed error, never a success.
    @discardableResult
    public func secure(authenticated: Bool = false) async throws(BluejayError) -> LinkSecurity {
        try await performGATT("secure the link") { link in try await link.secure(authenticated: authenticated) }
    }

    /// The bonds of this device's host.
    public func bonds() async throws(BluejayError) -> [Bond] {
        await (try requireBackend()).bonds()
    }

    /// Forgets the bond with a peripheral. Returns whether there was one.
    @discardableResult
    public func removeBond(_ peripheral: PeripheralIdentifier) async throws(BluejayError) -> Bool {
        let host = try requireBackend()
        do {
            return try await host.removeBond(with: peripheral.address)
        } catch {
            throw BluejayError(error, peripheral: peripheral, operation: "removing the bond")
        }
    }
}
