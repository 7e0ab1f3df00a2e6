import BluetoothCore

/// LE Advertising Report (Core 6.0, Vol 4, Part E, 7.7.65.2): legacy advertising PDUs and scan
/// responses received while scanning.
///
/// On the wire, after Num_Reports, each report's fields follow one another (event type,
/// address type, address, data length, data, RSSI), then the next report's: real controllers
/// and Bumble lay the reports out one by one.
public struct LEAdvertisingReportEvent: HCILEMetaEventParameters, PacketFields, CustomStringConvertible {
    public static let subeventCode: UInt8 = 0x02
    public static let name = "LE Advertising Report"
    /// Legacy advertising data is at most 31 octets.
    public static let maximumDataLength = 31

    /// One received advertising PDU or scan response.
    public struct Report: Sendable, Equatable, PacketFields, CustomStringConvertible {
        public var eventType = AdvertisingReportEventType.advInd
        public var addressType = AddressType.public
        public var address = BluetoothAddress.zero
        /// At most 31 octets.
        public var data: [UInt8] = []
        /// dBm; `nil` when the controller reports 127 ("not available").
        public var rssi: Int8?

        public init() {}

        public init(eventType: AdvertisingReportEventType, addressType: AddressType, address: BluetoothAddress, data: [UInt8], rssi: Int8?) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.data = data
            self.rssi = rssi
        }

        /// The advertiser as an address with its type.
        public var advertiser: DeviceAddress { DeviceAddress(address, type: addressType) }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&eventType, field: "Event_Type")
            try coder.uint8(&addressType, field: "Address_Type")
            try coder.address(&address)
            try coder.lengthPrefixedBytes(&data, maximum: LEAdvertisingReportEvent.maximumDataLength, field: "Data_Length")
            try coder.optionalPower(&rssi)
        }

        public var description: String {
            "\(eventType) \(advertiser) rssi=\(rssi.map { "\($0)" } ?? "n/a") [\(Hex.encode(data, separator: " "))]"
        }
    }

    public var reports: [Report] = []

    public init() {}

    public init(reports: [Report]) { self.reports = reports }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        var count = UInt8(truncatingIfNeeded: reports.count)
        try coder.uint8(&count)
        try coder.list(&reports, count: Int(count))
        try coder.end()
    }

    public var description: String {
        "LE Advertising Report " + reports.map(\.description).joined(separator: "; ")
    }
}
