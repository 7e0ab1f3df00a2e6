import BluetoothCore

/// Names a descriptor by its UUID and the characteristic it belongs to, for
/// reading and writing descriptors.
///
/// ```swift
/// let userDescription = DescriptorIdentifier(uuid: "2901", characteristic: heartRate)
/// ```
public struct DescriptorIdentifier: Hashable, Sendable, CustomStringConvertible {
    public let uuidString: String
    public let uuid: BluetoothUUID?
    public let characteristic: CharacteristicIdentifier

    public init(uuid: String, characteristic: CharacteristicIdentifier) {
        let parsed = BluetoothUUID(uuid)
        self.uuid = parsed
        self.uuidString = parsed?.description ?? uuid
        self.characteristic = characteristic
    }

    public init(uuid: BluetoothUUID, characteristic: CharacteristicIdentifier) {
        self.uuid = uuid
        self.uuidString = uuid.description
        self.characteristic = characteristic
    }

    func requireUUID() throws(BluejayError) -> BluetoothUUID {
        guard let uuid else { throw .invalidUUID(uuidString) }
        return uuid
    }

    public var description: String { "descriptor \(uuidString) of \(characteristic)" }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.characteristic == rhs.characteristic && (lhs.uuid != nil ? lhs.uuid == rhs.uuid : lhs.uuidString == rhs.uuidString)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(characteristic)
        if let uuid { hasher.combine(uuid) } else { hasher.combine(uuidString) }
    }
}
