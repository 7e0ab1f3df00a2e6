import BluetoothCore

/// A service as this device's server published it: where its attributes are, for updating
/// values and telling which characteristic a request is about.
public struct GATTPublishedService: Sendable, Hashable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    /// The service declaration's handle up to the service's last attribute.
    public var handleRange: ClosedRange<UInt16>
    public var characteristics: [GATTPublishedCharacteristic]

    public init(uuid: BluetoothUUID, isPrimary: Bool, handleRange: ClosedRange<UInt16>, characteristics: [GATTPublishedCharacteristic]) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.handleRange = handleRange
        self.characteristics = characteristics
    }

    /// The first characteristic with this UUID.
    public func characteristic(_ uuid: BluetoothUUID) -> GATTPublishedCharacteristic? {
        characteristics.first { $0.uuid == uuid }
    }

    public var description: String {
        "\(isPrimary ? "service" : "secondary service") \(uuid) [\(Hex.format(handleRange.lowerBound, digits: 4))-\(Hex.format(handleRange.upperBound, digits: 4))]"
    }
}

/// A characteristic as this device's server published it.
public struct GATTPublishedCharacteristic: Sendable, Hashable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var declarationHandle: UInt16
    /// The handle to pass to `GATTServer/updateValue(_:forHandle:)` and friends.
    public var valueHandle: UInt16
    /// The Client Characteristic Configuration descriptor, for notifying or indicating ones.
    public var clientConfigurationHandle: UInt16?
    /// Every descriptor, the ones the server added included, in handle order.
    public var descriptors: [GATTDescriptor]

    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, declarationHandle: UInt16, valueHandle: UInt16,
                clientConfigurationHandle: UInt16?, descriptors: [GATTDescriptor]) {
        self.uuid = uuid
        self.properties = properties
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.clientConfigurationHandle = clientConfigurationHandle
        self.descriptors = descriptors
    }

    public var description: String {
        "characteristic \(uuid) value=\(Hex.format(valueHandle, digits: 4)) [\(properties)]"
    }
}
