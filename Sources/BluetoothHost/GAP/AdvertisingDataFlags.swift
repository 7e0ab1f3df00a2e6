import BluetoothCore

/// The Flags AD type (Core Specification Supplement, Part A, 1.3). Reserved bits are kept.
public struct AdvertisingFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let leLimitedDiscoverableMode = Self(rawValue: 0x01)
    public static let leGeneralDiscoverableMode = Self(rawValue: 0x02)
    public static let brEdrNotSupported = Self(rawValue: 0x04)
    /// Simultaneous LE and BR/EDR to the same device capable (controller).
    public static let simultaneousLEAndBREDRController = Self(rawValue: 0x08)
    /// Previously "simultaneous LE and BR/EDR to the same device capable (host)".
    public static let simultaneousLEAndBREDRHost = Self(rawValue: 0x10)

    /// What an LE-only peripheral in general discoverable mode advertises (0x06).
    public static let leOnlyGeneralDiscoverable: Self = [.leGeneralDiscoverableMode, .brEdrNotSupported]
    /// What an LE-only peripheral in limited discoverable mode advertises (0x05).
    public static let leOnlyLimitedDiscoverable: Self = [.leLimitedDiscoverableMode, .brEdrNotSupported]

    public var description: String {
        let names: [(Self, String)] = [
            (.leLimitedDiscoverableMode, "LE Limited Discoverable"), (.leGeneralDiscoverableMode, "LE General Discoverable"),
            (.brEdrNotSupported, "BR/EDR Not Supported"), (.simultaneousLEAndBREDRController, "LE+BR/EDR Controller"),
            (.simultaneousLEAndBREDRHost, "LE+BR/EDR Host"),
        ]
        return "[\(names.filter { contains($0.0) }.map(\.1).joined(separator: ", "))]"
    }
}

extension AdvertisingData {
    /// The LE Role AD type (Core Specification Supplement, Part A, 1.17).
    public enum LERole: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
        case peripheralOnly = 0x00
        case centralOnly = 0x01
        case peripheralPreferred = 0x02
        case centralPreferred = 0x03

        public var description: String {
            switch self {
            case .peripheralOnly: return "Only Peripheral Role supported"
            case .centralOnly: return "Only Central Role supported"
            case .peripheralPreferred: return "Peripheral and Central Role supported, Peripheral Role preferred"
            case .centralPreferred: return "Peripheral and Central Role supported, Central Role preferred"
            }
        }
    }

    /// One Service Data structure: a service UUID of any width and the data for it
    /// (Core Specification Supplement, Part A, 1.11).
    public struct ServiceData: Hashable, Sendable {
        public var uuid: BluetoothUUID
        public var data: [UInt8]

        public init(uuid: BluetoothUUID, data: [UInt8]) {
            self.uuid = uuid
            self.data = data
        }
    }

    /// Manufacturer Specific Data (Core Specification Supplement, Part A, 1.4): a company
    /// identifier (Assigned Numbers 7, little-endian on air) and the company's bytes.
    public struct ManufacturerData: Hashable, Sendable {
        public var companyID: UInt16
        public var data: [UInt8]

        public init(companyID: UInt16, data: [UInt8]) {
            self.companyID = companyID
            self.data = data
        }
    }
}
