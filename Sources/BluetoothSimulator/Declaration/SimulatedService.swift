import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A service of a ``SimulatedPeripheral``.
///
/// ```swift
/// SimulatedService(uuid: "180F", characteristics: [
///     SimulatedCharacteristic(BatteryProfile.Level.self, value: [87]),
/// ])
/// ```
public struct SimulatedService: Sendable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// Primary (discoverable on its own) or secondary.
    public var isPrimary: Bool
    /// Its characteristics, in handle order.
    public var characteristics: [SimulatedCharacteristic]

    /// A service with these characteristics.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true, characteristics: [SimulatedCharacteristic] = []) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.characteristics = characteristics
    }

    /// A service with a GATTProfiles service UUID, e.g. `SimulatedService(HeartRateProfile.Service.self, characteristics: …)`.
    public init<S: ServiceConfigurable>(_ profile: S.Type, characteristics: [SimulatedCharacteristic] = []) {
        self.init(uuid: profile.uuid, characteristics: characteristics)
    }
}
