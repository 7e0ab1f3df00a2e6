import BluetoothCore

/// The Device Information service (Bluetooth SIG, Device Information Service 1.1): text
/// characteristics in UTF-8, the System ID and the PnP ID.
public enum DeviceInformationProfile {
    public struct Service: ServiceConfigurable {
        public static let uuid = BluetoothUUID(UInt16(0x180A))
        public static let name = "Device Information"
        public static let tag = "Bluetooth SIG"
    }

    /// A readable text characteristic.
    public protocol TextCharacteristic: CharacteristicConfigurable {}

    public struct ManufacturerName: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A29))
        public static let name = "Manufacturer Name String"
    }

    public struct ModelNumber: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A24))
        public static let name = "Model Number String"
    }

    public struct SerialNumber: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A25))
        public static let name = "Serial Number String"
    }

    public struct HardwareRevision: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A27))
        public static let name = "Hardware Revision String"
    }

    public struct FirmwareRevision: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A26))
        public static let name = "Firmware Revision String"
    }

    public struct SoftwareRevision: TextCharacteristic {
        public static let uuid = BluetoothUUID(UInt16(0x2A28))
        public static let name = "Software Revision String"
    }

    /// System ID (0x2A23): a 40-bit manufacturer-defined identifier and a 24-bit
    /// organizationally unique identifier, eight octets little-endian.
    public struct SystemID: RawPairDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A23))
        public static let name = "System ID"
        public static let properties: CharacteristicProperties = [.read]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = nil
        public static let stringValues: [String] = []

        /// The low 32 bits of the manufacturer identifier, then its high 8 bits with the OUI:
        /// kept as the two little-endian words the value is made of.
        public let rawValue1: UInt32
        public let rawValue2: UInt32

        public init?(rawValue1: UInt32, rawValue2: UInt32) {
            self.rawValue1 = rawValue1
            self.rawValue2 = rawValue2
        }

        /// From the 40-bit manufacturer identifier and the 24-bit OUI; `nil` when they do not fit.
        public init?(manufacturerIdentifier: UInt64, organizationallyUniqueIdentifier: UInt32) {
            guard manufacturerIdentifier < 1 << 40, organizationallyUniqueIdentifier < 1 << 24 else { return nil }
            self.init(rawValue1: UInt32(truncatingIfNeeded: manufacturerIdentifier),
                      rawValue2: UInt32(truncatingIfNeeded: manufacturerIdentifier >> 32) | organizationallyUniqueIdentifier << 8)
        }

        public var manufacturerIdentifier: UInt64 { UInt64(rawValue1) | UInt64(rawValue2 & 0xFF) << 32 }
        public var organizationallyUniqueIdentifier: UInt32 { rawValue2 >> 8 }

        public var stringValue: [String: String] {
            ["Manufacturer Identifier": String(manufacturerIdentifier), "Organizationally Unique Identifier": String(organizationallyUniqueIdentifier)]
        }

        public init?(stringValue: [String: String]) {
            guard let manufacturer = stringValue["Manufacturer Identifier"].flatMap({ UInt64(stringValue: $0) }),
                  let oui = stringValue["Organizationally Unique Identifier"].flatMap({ UInt32(stringValue: $0) }) else { return nil }
            self.init(manufacturerIdentifier: manufacturer, organizationallyUniqueIdentifier: oui)
        }
    }

    /// PnP ID (0x2A50): vendor ID source, vendor ID, product ID and product version.
    public struct PnPID: BytesDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A50))
        public static let name = "PnP ID"
        public static let properties: CharacteristicProperties = [.read]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = nil
        public static let stringValues: [String] = []

        /// 1: Bluetooth SIG company identifier; 2: USB Implementer's Forum vendor ID.
        public var vendorIDSource: UInt8
        public var vendorID: UInt16
        public var productID: UInt16
        public var productVersion: UInt16

        public init(vendorIDSource: UInt8, vendorID: UInt16, productID: UInt16, productVersion: UInt16) {
            self.vendorIDSource = vendorIDSource
            self.vendorID = vendorID
            self.productID = productID
            self.productVersion = productVersion
        }

        public init(bytes: [UInt8]) throws(SerdeError) {
            guard bytes.count == 7 else { throw .wrongLength(type: "PnP ID", expected: 7, actual: bytes.count) }
            vendorIDSource = bytes[0]
            vendorID = try UInt16.deserialize(bytes, at: 1)
            productID = try UInt16.deserialize(bytes, at: 3)
            productVersion = try UInt16.deserialize(bytes, at: 5)
        }

        public func serialize() -> [UInt8] {
            [vendorIDSource] + vendorID.serialize() + productID.serialize() + productVersion.serialize()
        }

        public var stringValue: [String: String] {
            ["Vendor ID Source": String(vendorIDSource), "Vendor ID": String(vendorID),
             "Product ID": String(productID), "Product Version": String(productVersion)]
        }

        public init?(stringValue: [String: String]) {
            guard let source = stringValue["Vendor ID Source"].flatMap({ UInt8(stringValue: $0) }),
                  let vendor = stringValue["Vendor ID"].flatMap({ UInt16(stringValue: $0) }),
                  let product = stringValue["Product ID"].flatMap({ UInt16(stringValue: $0) }),
                  let version = stringValue["Product Version"].flatMap({ UInt16(stringValue: $0) }) else { return nil }
            self.init(vendorIDSource: source, vendorID: vendor, productID: product, productVersion: version)
        }
    }

    public static var service: ServiceProfile {
        ServiceProfile(Service.self, characteristics: [
            .string(ManufacturerName.self), .string(ModelNumber.self), .string(SerialNumber.self),
            .string(HardwareRevision.self), .string(FirmwareRevision.self), .string(SoftwareRevision.self),
            .rawPair(SystemID.self), .structured(PnPID.self),
        ])
    }
}

extension DeviceInformationProfile.TextCharacteristic {
    public static var properties: CharacteristicProperties { [.read] }
    public static var permissions: ProfileAttributePermissions { [.readable] }
    public static var initialValue: [UInt8]? { nil }
}
