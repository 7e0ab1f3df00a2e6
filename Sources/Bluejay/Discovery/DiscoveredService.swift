import BluetoothCore
import BluetoothHost
import GATTProfiles

/// A service found by ``Bluejay/discoverServices(naming:timeout:)``, named from a
/// `GATTProfiles/ProfileRegistry` (BlueCap's discovery with profiles).
public struct DiscoveredService: Sendable, Equatable, CustomStringConvertible {
    public let identifier: ServiceIdentifier
    /// The registry's name for it, else its Bluetooth SIG name, else `nil`.
    public let name: String?
    public let characteristics: [DiscoveredCharacteristic]

    public var description: String { "\(identifier)\(name.map { " (\($0))" } ?? "")" }
}

/// A characteristic of a ``DiscoveredService``.
public struct DiscoveredCharacteristic: Sendable, Equatable, CustomStringConvertible {
    public let identifier: CharacteristicIdentifier
    /// The registry's name for it (in its service, or any), else its Bluetooth SIG name, else `nil`.
    public let name: String?
    public let properties: CharacteristicProperties
    public let descriptors: [DiscoveredDescriptor]

    public var description: String { "\(identifier.uuidString)\(name.map { " (\($0))" } ?? "")" }
}

/// A descriptor of a ``DiscoveredCharacteristic``.
public struct DiscoveredDescriptor: Sendable, Equatable, CustomStringConvertible {
    public let identifier: DescriptorIdentifier
    /// Its Bluetooth SIG name, or `nil`.
    public let name: String?

    public var description: String { "\(identifier.uuidString)\(name.map { " (\($0))" } ?? "")" }
}

extension [GATTDiscoveredService] {
    /// The database as Bluejay's identifiers, named from `registry`.
    func named(by registry: ProfileRegistry) -> [DiscoveredService] {
        map { entry in
            let service = ServiceIdentifier(uuid: entry.service.uuid)
            return DiscoveredService(
                identifier: service, name: registry.name(forService: entry.service.uuid),
                characteristics: entry.characteristics.map { item in
                    let uuid = item.characteristic.uuid
                    let characteristic = CharacteristicIdentifier(uuid: uuid, service: service)
                    return DiscoveredCharacteristic(
                        identifier: characteristic, name: registry.name(forCharacteristic: uuid, inService: entry.service.uuid),
                        properties: item.characteristic.properties,
                        descriptors: item.descriptors.map {
                            DiscoveredDescriptor(identifier: DescriptorIdentifier(uuid: $0.uuid, characteristic: characteristic),
                                                 name: GATTNames.name(forDescriptor: $0.uuid))
                        })
                })
        }
    }
}
