/// The Advertising_Event_Properties of LE Set Extended Advertising Parameters
/// (Core 6.0, Vol 4, Part E, 7.8.53).
public struct AdvertisingEventProperties: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = Self(rawValue: 1 << 0)
    public static let scannable = Self(rawValue: 1 << 1)
    public static let directed = Self(rawValue: 1 << 2)
    /// High duty cycle directed connectable advertising (legacy PDUs only).
    public static let highDutyCycleDirected = Self(rawValue: 1 << 3)
    /// Legacy advertising PDUs: the data is then limited to 31 octets.
    public static let legacy = Self(rawValue: 1 << 4)
    /// Omit the advertiser's address (extended PDUs only).
    public static let anonymous = Self(rawValue: 1 << 5)
    /// Include the TX power in the extended header.
    public static let includeTxPower = Self(rawValue: 1 << 6)

    /// The legacy PDU types the specification allows as property sets (7.8.53, Table 7.2):
    /// ADV_IND, ADV_DIRECT_IND (low and high duty cycle), ADV_SCAN_IND, ADV_NONCONN_IND.
    public static let legacyCombinations: Set<AdvertisingEventProperties> = [
        [.legacy, .connectable, .scannable], [.legacy, .connectable, .directed],
        [.legacy, .connectable, .directed, .highDutyCycleDirected], [.legacy, .scannable], [.legacy],
    ]

    /// Whether the controller must refuse these properties (7.8.53): a legacy set not in
    /// ``legacyCombinations``, or an extended set that is both connectable and scannable,
    /// anonymous and connectable, or high duty cycle.
    public var isValid: Bool {
        if contains(.legacy) { return Self.legacyCombinations.contains(self) }
        if contains(.connectable) && contains(.scannable) { return false }
        if contains(.anonymous) && contains(.connectable) { return false }
        return !contains(.highDutyCycleDirected)
    }

    public var description: String {
        let names: [(Self, String)] = [(.connectable, "connectable"), (.scannable, "scannable"), (.directed, "directed"),
                                       (.highDutyCycleDirected, "high-duty"), (.legacy, "legacy"), (.anonymous, "anonymous"),
                                       (.includeTxPower, "tx-power")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ",") + "]"
    }
}

/// The Operation of LE Set Extended Advertising Data and LE Set Extended Scan Response Data
/// (Core 6.0, Vol 4, Part E, 7.8.54-7.8.55): which part of the data a command carries.
public enum AdvertisingDataOperation: UInt8, Sendable, Hashable, CaseIterable {
    case intermediateFragment = 0x00
    case firstFragment = 0x01
    case lastFragment = 0x02
    /// All of the data in one command.
    case complete = 0x03
    /// The same data, with a new Advertising DID (advertising data only).
    case unchangedData = 0x04
}

/// The Fragment_Preference of LE Set Extended Advertising Data (7.8.54).
public enum AdvertisingFragmentPreference: UInt8, Sendable, Hashable, CaseIterable {
    /// The controller may fragment the data over several PDUs.
    case controllerMayFragment = 0x00
    /// The controller should not fragment (or should fragment as little as possible).
    case controllerShouldNotFragment = 0x01
}
