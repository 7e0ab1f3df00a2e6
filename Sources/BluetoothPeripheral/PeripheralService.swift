import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A service to publish with `PeripheralManager/add(_:)`: BlueCap's mutable service, a
/// builder over the `GATTServiceDefinition` the GATT server takes.
///
/// ```swift
/// let service = PeripheralService(profile: TISensorTag.AccelerometerService.profile)
/// let battery = PeripheralService(uuid: "180F", characteristics: [
///     PeripheralCharacteristic(uuid: "2A19", properties: [.read, .notify], value: [100]),
/// ])
/// ```
public struct PeripheralService: Sendable {
    /// The service UUID.
    public var uuid: BluetoothUUID
    /// A name for logs; centrals never see it.
    public var name: String?
    /// Primary services are found by discovery; secondary ones only through an include.
    public var isPrimary: Bool
    /// Services already published that this one includes, by UUID.
    public var includedServices: [BluetoothUUID]
    /// Its characteristics, in handle order.
    public var characteristics: [PeripheralCharacteristic]

    /// A service with these characteristics.
    public init(uuid: BluetoothUUID, name: String? = nil, isPrimary: Bool = true, includedServices: [BluetoothUUID] = [],
                characteristics: [PeripheralCharacteristic] = []) {
        self.uuid = uuid
        self.name = name
        self.isPrimary = isPrimary
        self.includedServices = includedServices
        self.characteristics = characteristics
    }

    /// A service as the GATT server takes it; its characteristics have no name or profile.
    public init(definition: GATTServiceDefinition, name: String? = nil) {
        self.init(uuid: definition.uuid, name: name, isPrimary: definition.isPrimary, includedServices: definition.includedServices,
                  characteristics: definition.characteristics.map { PeripheralCharacteristic(definition: $0) })
    }

    /// The service of a profile with every characteristic the profile defines.
    public init(profile: ServiceProfile) {
        self.init(uuid: profile.uuid, name: profile.name, characteristics: profile.characteristics.map(PeripheralCharacteristic.init(profile:)))
    }

    /// What the GATT server publishes: the service with its characteristics' definitions.
    public var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: uuid, isPrimary: isPrimary, includedServices: includedServices,
                              characteristics: characteristics.map(\.definition))
    }

    /// The definition the GATT server takes; the handlers route requests to `router`.
    func definition(router: RequestRouter) -> GATTServiceDefinition {
        var routed = definition
        routed.characteristics = routed.characteristics.map { PeripheralCharacteristic.route($0, to: router) }
        return routed
    }
}
