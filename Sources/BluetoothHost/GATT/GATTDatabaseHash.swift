import BluetoothCore
import BluetoothCrypto

/// The Database Hash of a GATT server (Core 6.0, Vol 3, Part G, 7.3): AES-CMAC with a zero
/// key over the attributes that shape the database, so that a client can tell in one read
/// whether a database it cached is still the one the server has.
public struct GATTDatabaseHash: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 16 octets as the characteristic value carries them (a uint128, least significant
    /// octet first).
    public let bytes: [UInt8]

    /// A hash as read from a Database Hash characteristic; `nil` unless 16 octets.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 16 else { return nil }
        self.bytes = Array(bytes)
    }

    /// One attribute as the hash sees it.
    public struct Attribute: Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID
        public var value: [UInt8]

        public init(handle: UInt16, type: BluetoothUUID, value: [UInt8]) {
            self.handle = handle
            self.type = type
            self.value = value
        }
    }

    /// The hash of attributes in ascending handle order (Core 6.0, Vol 3, Part G, 7.3.1):
    /// service, include, characteristic declarations and Characteristic Extended Properties
    /// count with handle, type and value; the User Description, Client and Server
    /// Configuration, Presentation and Aggregate Format descriptors with handle and type only
    /// (their values change without the database changing); every other attribute not at all.
    public init(attributes: some Sequence<Attribute>) {
        var message = ByteWriter(capacity: 256)
        for attribute in attributes {
            guard let type = attribute.type.uint16 else { continue }
            switch type {
            case 0x2800, 0x2801, 0x2802, 0x2803, 0x2900:
                message.write(attribute.handle)
                message.write(type)
                message.write(contentsOf: attribute.value)
            case 0x2901, 0x2902, 0x2903, 0x2904, 0x2905:
                message.write(attribute.handle)
                message.write(type)
            default:
                continue
            }
        }
        let mac = SecurityToolbox.aesCMAC(key: 0, message: message.bytes)
        // The value is sent least significant octet first, like every multi-octet field.
        bytes = ByteWriter.littleEndianBytes(of: mac)
    }

    /// Decodes the 16 octets, refusing any other length (a cache file is not trusted).
    public init(from decoder: any Decoder) throws {
        let bytes = try decoder.singleValueContainer().decode([UInt8].self)
        guard bytes.count == 16 else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a Database Hash has 16 octets, not \(bytes.count)"))
        }
        self.bytes = bytes
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(bytes)
    }

    public var description: String { Hex.encode(bytes.reversed()) }
}
