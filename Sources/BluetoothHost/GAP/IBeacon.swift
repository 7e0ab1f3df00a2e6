import BluetoothCore

/// An Apple iBeacon advertisement: Manufacturer Specific Data of company 0x004C (Apple) with
/// beacon type 0x02 and length 0x15, carrying a proximity UUID, major, minor and the
/// measured power at 1 m. Unlike the rest of Bluetooth, the UUID, major and minor are
/// big-endian on air.
///
/// ```
/// 02 01 06                  Flags: LE General Discoverable, BR/EDR Not Supported
/// 1A FF 4C 00 02 15         Manufacturer Specific Data, Apple, iBeacon, 21 octets follow
/// <16 octets UUID> <major BE> <minor BE> <measured power>
/// ```
public struct IBeacon: Hashable, Sendable, CustomStringConvertible {
    /// Apple's company identifier (Assigned Numbers 7).
    public static let appleCompanyID: UInt16 = 0x004C
    /// The iBeacon type octet.
    public static let beaconType: UInt8 = 0x02
    /// The number of octets after the type and length octets.
    public static let payloadLength: UInt8 = 0x15

    public var proximityUUID: BluetoothUUID
    public var major: UInt16
    public var minor: UInt16
    /// RSSI at 1 m, in dBm.
    public var measuredPower: Int8

    public init(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.proximityUUID = proximityUUID
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// Reads a beacon from manufacturer data; `nil` unless it is Apple's and an iBeacon.
    public init?(manufacturerData: AdvertisingData.ManufacturerData) {
        let bytes = manufacturerData.data
        guard manufacturerData.companyID == Self.appleCompanyID, bytes.count == 2 + Int(Self.payloadLength),
              bytes[0] == Self.beaconType, bytes[1] == Self.payloadLength,
              let uuid = BluetoothUUID(bigEndianBytes: Array(bytes[2..<18])) else { return nil }
        proximityUUID = uuid
        major = UInt16(bytes[18]) << 8 | UInt16(bytes[19])
        minor = UInt16(bytes[20]) << 8 | UInt16(bytes[21])
        measuredPower = Int8(bitPattern: bytes[22])
    }

    /// The first iBeacon in an advertisement, if any. The flags are not required.
    public init?(advertisingData: AdvertisingData) {
        guard let beacon = advertisingData.allManufacturerData.lazy.compactMap(IBeacon.init(manufacturerData:)).first
        else { return nil }
        self = beacon
    }

    /// The Manufacturer Specific Data for this beacon.
    public var manufacturerData: AdvertisingData.ManufacturerData {
        var bytes: [UInt8] = [Self.beaconType, Self.payloadLength]
        bytes += proximityUUID.bigEndianBytes
        bytes += [UInt8(major >> 8), UInt8(truncatingIfNeeded: major), UInt8(minor >> 8), UInt8(truncatingIfNeeded: minor)]
        bytes.append(UInt8(bitPattern: measuredPower))
        return AdvertisingData.ManufacturerData(companyID: Self.appleCompanyID, data: bytes)
    }

    /// The full advertisement: general-discoverable, LE-only flags, then the beacon (30 octets).
    public var advertisingData: AdvertisingData {
        AdvertisingData([
            .flags(.leOnlyGeneralDiscoverable),
            .manufacturerSpecificData(companyID: Self.appleCompanyID, data: manufacturerData.data),
        ])
    }

    public var description: String {
        "iBeacon \(proximityUUID.uuidString) major=\(major) minor=\(minor) power=\(measuredPower) dBm"
    }
}
