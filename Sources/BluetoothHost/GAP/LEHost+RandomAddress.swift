import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// Sets the controller's random address (LE Set Random Address, Core 6.0, Vol 4, Part E,
    /// 7.8.4), the one advertising with ``AdvertisingParameters/ownAddressType`` `.random` uses.
    /// The host remembers it, so that a link made through that advertising pairs with the
    /// address the peer saw. The controller refuses it while advertising or scanning
    /// (Command Disallowed). On a controller without a public address, where the random address
    /// is the static identity (``identityAddress``), it replaces that address over the air for
    /// advertising, scanning and connecting alike (a resolvable private address, say), while
    /// the identity distributed when pairing stays the static one.
    ///
    /// With privacy on (``HostConfiguration/privacy``) the host sets and changes the random
    /// address itself, and this throws ``HostError/invalidArgument(_:)``.
    public func setRandomAddress(_ address: BluetoothAddress) async throws {
        try requirePoweredOn()
        guard addressRotation == nil else {
            throw HostError.invalidArgument("privacy is on: the host sets its random address itself (a resolvable private address, changed every \(configuration.privacy.addressLifetime))")
        }
        try await withAddressingGate { try await applyRandomAddress(address) }
    }
}
