import BluetoothHost

/// Pairing from the `async` API: the same procedures as ``Bluejay/pair()``, on this
/// peripheral's queue.
extension RemotePeripheral {
    /// The link's security now.
    public var security: LinkSecurity { connection.security }

    /// Pairs now, even if a bond exists, and returns the link's security. With `authenticated`,
    /// MITM protection is required: a pairing that cannot give it fails with a typed error.
    @discardableResult
    public func pair(authenticated: Bool = false) async throws(BluejayError) -> LinkSecurity {
        try await perform("pair") { link in try await link.pair(authenticated: authenticated) }
    }

    /// Encrypts the link with the bond's key, else by pairing; at once when it already is.
    /// With `authenticated`, a link without MITM protection is a typed error, never a success.
    @discardableResult
    public func secure(authenticated: Bool = false) async throws(BluejayError) -> LinkSecurity {
        try await perform("secure the link") { link in try await link.secure(authenticated: authenticated) }
    }

    /// Forgets the bond with this peripheral (the link stays up). Returns whether there was one.
    @discardableResult
    public func removeBond() async throws(BluejayError) -> Bool {
        do {
            return try await backend.removeBond(with: identifier.address)
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: "removing the bond")
        }
    }
}

extension BluejayCentral {
    /// Sets who answers pairing questions (passkeys, numeric comparison, consent).
    public func setPairingAgent(_ agent: any PairingAgent) async {
        await backend.setPairingAgent(agent)
    }

    /// The bonds of this central's host.
    public func bonds() async -> [Bond] {
        await backend.bonds()
    }

    /// Forgets the bond with a peripheral. Returns whether there was one.
    @discardableResult
    public func removeBond(_ peripheral: PeripheralIdentifier) async throws(BluejayError) -> Bool {
        do {
            return try await backend.removeBond(with: peripheral.address)
        } catch {
            throw BluejayError(error, peripheral: peripheral, operation: "removing the bond")
        }
    }
}
