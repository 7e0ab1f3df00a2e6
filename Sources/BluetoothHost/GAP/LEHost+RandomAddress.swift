import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// Sets the controller's random address (LE Set Random Address, Core 6.0, Vol 4, Part E,
    /// 7.8.4), the one advertising with ``AdvertisingParameters/ownAddressType`` `.random` uses.
    /// The host remembers it, so that a link made through that advertising pairs with the
    /// address the peer saw. The controller refuses it while advertising or scanning
    /// (Command Disallowed).
    public func setRandomAddress(_ address: BluetoothAddress) async throws {
        try requirePoweredOn()
        _ = try await send(LESetRandomAddressCommand(address: address))
        randomAddress = address
    }
}
