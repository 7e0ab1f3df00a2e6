import BluetoothCore

/// Attribute types that GATT defines (Core 6.0, Vol 3, Part G, 3).
public enum GATTAttributeType {
    public static let primaryService = BluetoothUUID(UInt16(0x2800))
    public static let secondaryService = BluetoothUUID(UInt16(0x2801))
    public static let include = BluetoothUUID(UInt16(0x2802))
    public static let characteristic = BluetoothUUID(UInt16(0x2803))
    public static let characteristicExtendedProperties = BluetoothUUID(UInt16(0x2900))
    public static let characteristicUserDescription = BluetoothUUID(UInt16(0x2901))
    public static let clientCharacteristicConfiguration = BluetoothUUID(UInt16(0x2902))
    public static let serverCharacteristicConfiguration = BluetoothUUID(UInt16(0x2903))
    public static let characteristicPresentationFormat = BluetoothUUID(UInt16(0x2904))
    public static let characteristicAggregateFormat = BluetoothUUID(UInt16(0x2905))
    /// The GATT service and its Service Changed characteristic.
    public static let gattService = BluetoothUUID(UInt16(0x1801))
    public static let serviceChanged = BluetoothUUID(UInt16(0x2A05))
    /// Client Supported Features and Database Hash (Core 6.0, Vol 3, Part G, 7.2 and 7.3).
    public static let clientSupportedFeatures = BluetoothUUID(UInt16(0x2B29))
    public static let databaseHash = BluetoothUUID(UInt16(0x2B2A))
    /// The GAP service, device name and appearance.
    public static let gapService = BluetoothUUID(UInt16(0x1800))
    public static let deviceName = BluetoothUUID(UInt16(0x2A00))
    public static let appearance = BluetoothUUID(UInt16(0x2A01))
}

/// A service found on a peer.
public struct GATTService: Hashable, Sendable, Codable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var isPrimary: Bool
    /// The handles of the service declaration and of everything that belongs to it.
    public var handleRange: ClosedRange<UInt16>

    public init(uuid: BluetoothUUID, isPrimary: Bool = true, handleRange: ClosedRange<UInt16>) {
        self.uuid = uuid
        self.isPrimary = isPrimary
        self.handleRange = handleRange
    }

    public var description: String {
        "\(isPrimary ? "service" : "secondary service") \(uuid) [\(Hex.format(handleRange.lowerBound))-\(Hex.format(handleRange.upperBound))]"
    }
}

/// An included service declaration (Core 6.0, Vol 3, Part G, 3.2).
public struct GATTIncludedService: Hashable, Sendable, Codable {
    /// The handle of the include declaration itself.
    public var declarationHandle: UInt16
    public var service: GATTService

    public init(declarationHandle: UInt16, service: GATTService) {
        self.declarationHandle = declarationHandle
        self.service = service
    }
}

/// A characteristic found on a peer.
public struct GATTCharacteristic: Hashable, Sendable, Codable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var properties: CharacteristicProperties
    public var declarationHandle: UInt16
    public var valueHandle: UInt16
    /// The last handle that belongs to this characteristic (its descriptors end there).
    public var endHandle: UInt16

    public init(uuid: BluetoothUUID, properties: CharacteristicProperties, declarationHandle: UInt16, valueHandle: UInt16, endHandle: UInt16) {
        self.uuid = uuid
        self.properties = properties
        self.declarationHandle = declarationHandle
        self.valueHandle = valueHandle
        self.endHandle = endHandle
    }

    /// Handles where this characteristic's descriptors may be.
    public var descriptorRange: ClosedRange<UInt16>? {
        valueHandle < endHandle ? (valueHandle + 1)...endHandle : nil
    }

    public var description: String {
        "characteristic \(uuid) value=\(Hex.format(valueHandle)) [\(properties)]"
    }
}

/// A descriptor found on a peer.
public struct GATTDescriptor: Hashable, Sendable, Codable, CustomStringConvertible {
    public var uuid: BluetoothUUID
    public var handle: UInt16

    public init(uuid: BluetoothUUID, handle: UInt16) {
        self.uuid = uuid
        self.handle = handle
    }

    public var description: String { "descriptor \(uuid) handle=\(Hex.format(handle))" }
}

/// The Client Characteristic Configuration value (Core 6.0, Vol 3, Part G, 3.3.3.3).
public struct ClientCharacteristicConfiguration: OptionSet, Hashable, Sendable, Codable {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let notification = ClientCharacteristicConfiguration(rawValue: 0x0001)
    public static let indication = ClientCharacteristicConfiguration(rawValue: 0x0002)

    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: 2)
        writer.write(rawValue)
        return writer.bytes
    }
}
