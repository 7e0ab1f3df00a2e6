/// The Advertising_Type of LE Set Advertising Parameters (Core 6.0, Vol 4, Part E, 7.8.5).
public enum AdvertisingType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Connectable and scannable undirected advertising.
    case advInd = 0x00
    /// Connectable high duty cycle directed advertising.
    case advDirectIndHigh = 0x01
    /// Scannable undirected advertising.
    case advScanInd = 0x02
    /// Non-connectable undirected advertising.
    case advNonconnInd = 0x03
    /// Connectable low duty cycle directed advertising.
    case advDirectIndLow = 0x04

    public var description: String {
        switch self {
        case .advInd: return "ADV_IND"
        case .advDirectIndHigh: return "ADV_DIRECT_IND (high duty cycle)"
        case .advScanInd: return "ADV_SCAN_IND"
        case .advNonconnInd: return "ADV_NONCONN_IND"
        case .advDirectIndLow: return "ADV_DIRECT_IND (low duty cycle)"
        }
    }
}

/// The Advertising_Channel_Map of LE Set Advertising Parameters (Core 6.0, Vol 4, Part E, 7.8.5).
public struct AdvertisingChannelMap: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let channel37 = AdvertisingChannelMap(rawValue: 1 << 0)
    public static let channel38 = AdvertisingChannelMap(rawValue: 1 << 1)
    public static let channel39 = AdvertisingChannelMap(rawValue: 1 << 2)
    /// The default: all three primary advertising channels.
    public static let all: AdvertisingChannelMap = [.channel37, .channel38, .channel39]
}

/// The Advertising_Filter_Policy of LE Set Advertising Parameters (Core 6.0, Vol 4, Part E, 7.8.5).
public enum AdvertisingFilterPolicy: UInt8, Sendable, Hashable, CaseIterable {
    /// Accept scan and connection requests from anyone.
    case acceptAll = 0x00
    /// Scan requests only from the Filter Accept List; connection requests from anyone.
    case filterScanRequests = 0x01
    /// Scan requests from anyone; connection requests only from the Filter Accept List.
    case filterConnectionRequests = 0x02
    /// Scan and connection requests only from the Filter Accept List.
    case filterBoth = 0x03
}

/// The Event_Type of an LE Advertising Report (Core 6.0, Vol 4, Part E, 7.7.65.2): which
/// legacy PDU was received.
public enum AdvertisingReportEventType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case advInd = 0x00
    case advDirectInd = 0x01
    case advScanInd = 0x02
    case advNonconnInd = 0x03
    case scanRsp = 0x04

    /// Whether the advertiser accepts connections.
    public var isConnectable: Bool { self == .advInd || self == .advDirectInd }

    public var description: String {
        switch self {
        case .advInd: return "ADV_IND"
        case .advDirectInd: return "ADV_DIRECT_IND"
        case .advScanInd: return "ADV_SCAN_IND"
        case .advNonconnInd: return "ADV_NONCONN_IND"
        case .scanRsp: return "SCAN_RSP"
        }
    }
}

/// The property bits of an LE Extended Advertising Report's Event_Type
/// (Core 6.0, Vol 4, Part E, 7.7.65.13): bits 0–4. Bits 5–6 are the data status, kept apart in
/// ``AdvertisingDataStatus``.
public struct ExtendedAdvertisingEventType: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let connectable = ExtendedAdvertisingEventType(rawValue: 1 << 0)
    public static let scannable = ExtendedAdvertisingEventType(rawValue: 1 << 1)
    public static let directed = ExtendedAdvertisingEventType(rawValue: 1 << 2)
    public static let scanResponse = ExtendedAdvertisingEventType(rawValue: 1 << 3)
    /// A legacy advertising PDU was used.
    public static let legacy = ExtendedAdvertisingEventType(rawValue: 1 << 4)

    /// Bits 0–4, the ones this type holds.
    static let propertyMask: UInt16 = 0x001F

    public var description: String {
        var names: [String] = []
        if contains(.connectable) { names.append("connectable") }
        if contains(.scannable) { names.append("scannable") }
        if contains(.directed) { names.append("directed") }
        if contains(.scanResponse) { names.append("scan-response") }
        if contains(.legacy) { names.append("legacy") }
        return "[" + names.joined(separator: ",") + "]"
    }
}

/// Whether an extended advertising report carries all of the advertising data
/// (Core 6.0, Vol 4, Part E, 7.7.65.13, Event_Type bits 5–6).
public enum AdvertisingDataStatus: UInt8, Sendable, Hashable, CaseIterable {
    case complete = 0b00
    /// More data follows in the next report.
    case incompleteMoreToCome = 0b01
    /// The data was truncated and no more will come.
    case incompleteTruncated = 0b10
}
