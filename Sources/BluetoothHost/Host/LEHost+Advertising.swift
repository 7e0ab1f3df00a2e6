import BluetoothCore
import BluetoothHCI

/// Whether and how this host advertises (the peripheral role).
struct AdvertisingState: Sendable {}

extension LEHost {
    /// A central connected to this device while it advertised.
    func advertisingDidConnect(_ connection: Connection) {}
}
