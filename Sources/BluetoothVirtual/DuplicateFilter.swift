import BluetoothCore

/// The scanner's duplicate filter (Core 6.0, Vol 4, Part E, 7.8.11, Filter_Duplicates): each
/// advertiser is reported once per kind of PDU (advertising or scan response) until scanning
/// is enabled again. A plain value.
struct DuplicateFilter: Sendable {
    private struct Key: Hashable, Sendable {
        var address: BluetoothAddress
        var addressType: AddressType
        var isScanResponse: Bool
        var sid: UInt8?
    }

    private var seen: Set<Key> = []

    init() {}

    /// Whether this report is the first of its kind since the last reset (and remembers it).
    /// Extended advertising sets of one advertiser count apart, by their SID.
    mutating func admit(_ advertiser: DeviceAddress, isScanResponse: Bool, sid: UInt8? = nil) -> Bool {
        seen.insert(Key(address: advertiser.address, addressType: advertiser.type.base, isScanResponse: isScanResponse, sid: sid)).inserted
    }

    mutating func reset() { seen.removeAll() }
}
