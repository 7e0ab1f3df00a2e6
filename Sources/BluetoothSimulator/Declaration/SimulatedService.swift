import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A service of a ``SimulatedPeripheral``, a builder over the `GATTServiceDefinition`
/// its device publishes.
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
    /// Services of the same device, declared before this one, that it includes, by UUID.
    public var includedServices: [BluetoothUUID]
    /// Its characteristics, in handle order.
    public var characteristics: [SimulatedCharacteristic]

    /// A service with these characteristics.
    public init(uuid: BluetoothUUID, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [SimulatedCharacteristic] = []) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }

    /// A service with a GATTProfiles service UUID, e.g. `SimulatedService(HeartRateProfile.Service.self, characteristics: …)`.
    public init<S: ServiceConfigurable>(_ profile: S.Type, characteristics: [SimulatedCharacteristic] = []) {
        self.init(uuid: profile.uuid, characteristics: characteristics)
    }

    /// What the device's GATT server publishes: the service with its characteristics'
    /// definitions.
    public var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
                              characteristics: characteristics.map(\.definition))
    }
}
