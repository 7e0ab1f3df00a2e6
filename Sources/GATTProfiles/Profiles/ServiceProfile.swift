import BluetoothCore

/// A service as a profile defines it: name, UUID, tag and the characteristics it holds.
///
/// ```swift
/// var profile = ServiceProfile(TISensorTag.AccelerometerService.self)
/// profile.addCharacteristic(.raw(TISensorTag.AccelerometerService.Enabled.self))
/// ```
public struct ServiceProfile: Sendable, CustomStringConvertible {
    public let uuid: BluetoothUUID
    public let name: String
    public let tag: String
    public private(set) var characteristics: [CharacteristicProfile]

    public init(uuid: BluetoothUUID, name: String, tag: String = "", characteristics: [CharacteristicProfile] = []) {
        self.uuid = uuid
        self.name = name
        self.tag = tag
        self.characteristics = characteristics
    }

    /// The profile of a ``ServiceConfigurable`` type.
    public init<S: ServiceConfigurable>(_ service: S.Type, characteristics: [CharacteristicProfile] = []) {
        self.init(uuid: S.uuid, name: S.name, tag: S.tag, characteristics: characteristics)
    }

    /// Adds a characteristic, replacing one with the same UUID.
    public mutating func addCharacteristic(_ characteristic: CharacteristicProfile) {
        characteristics.removeAll { $0.uuid == characteristic.uuid }
        characteristics.append(characteristic)
    }

    public func characteristic(_ uuid: BluetoothUUID) -> CharacteristicProfile? {
        characteristics.first { $0.uuid == uuid }
    }

    public var description: String { "\(name) (\(uuid)), \(characteristics.count) characteristic(s)" }
}
