import BluetoothCore

/// LE Extended Advertising Report (Core 6.0, Vol 4, Part E, 7.7.65.13): legacy and extended
/// advertising received while extended scanning. Reports are laid out one after another, each
/// with its fields in order.
public struct LEExtendedAdvertisingReportEvent: HCILEMetaEventParameters, PacketFields, CustomStringConvertible {
    public static let subeventCode: UInt8 = 0x0D
    public static let name = "LE Extended Advertising Report"
    /// The most data one report carries (Data_Length 0...229), so that the event fits in 255 octets.
    public static let maximumDataLength = 229

    /// One received advertisement or fragment of one.
    public struct Report: Sendable, Equatable, PacketFields, CustomStringConvertible {
        public var eventType: ExtendedAdvertisingEventType = []
        /// Whether ``data`` is complete or more fragments follow.
        public var dataStatus = AdvertisingDataStatus.complete
        public var addressType = ExtendedReportAddressType.public
        public var address = BluetoothAddress.zero
        /// LE 1M or LE Coded.
        public var primaryPHY = LEPhy.le1M
        /// `nil` when no packets were received on the secondary advertising channel (0x00).
        public var secondaryPHY: LEPhy?
        /// The advertising set identifier 0...15; `nil` when no ADI field was present (0xFF).
        public var advertisingSID: UInt8?
        /// dBm; `nil` when not available (127).
        public var txPower: Int8?
        /// dBm; `nil` when not available (127).
        public var rssi: Int8?
        /// In units of 1.25 ms; 0 when there is no periodic advertising.
        public var periodicAdvertisingInterval: UInt16 = 0
        public var directAddressType = ExtendedReportAddressType.public
        /// The target of directed advertising; zero otherwise.
        public var directAddress = BluetoothAddress.zero
        /// At most 229 octets.
        public var data: [UInt8] = []

        public init() {}

        public init(eventType: ExtendedAdvertisingEventType, dataStatus: AdvertisingDataStatus = .complete,
                    addressType: ExtendedReportAddressType, address: BluetoothAddress, primaryPHY: LEPhy = .le1M,
                    secondaryPHY: LEPhy? = nil, advertisingSID: UInt8? = nil, txPower: Int8? = nil, rssi: Int8?,
                    periodicAdvertisingInterval: UInt16 = 0, directAddressType: ExtendedReportAddressType = .public,
                    directAddress: BluetoothAddress = .zero, data: [UInt8]) {
            self.eventType = eventType
            self.dataStatus = dataStatus
            self.addressType = addressType
            self.address = address
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.advertisingSID = advertisingSID
            self.txPower = txPower
            self.rssi = rssi
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType
            self.directAddress = directAddress
            self.data = data
        }

        /// The advertiser as an address with its type; `nil` for anonymous advertising.
        public var advertiser: DeviceAddress? {
            addressType.addressType.map { DeviceAddress(address, type: $0) }
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            // Event_Type: the properties in bits 0-4, the data status in bits 5-6.
            var rawType = eventType.rawValue & ExtendedAdvertisingEventType.propertyMask | UInt16(dataStatus.rawValue) << 5
            try coder.uint16(&rawType)
            eventType = ExtendedAdvertisingEventType(rawValue: rawType & ExtendedAdvertisingEventType.propertyMask)
            let status = UInt8(truncatingIfNeeded: (rawType >> 5) & 0b11)
            guard let dataStatus = AdvertisingDataStatus(rawValue: status) else {
                throw .invalidValue(context: coder.context, field: "Event_Type data status", value: UInt64(status))
            }
            self.dataStatus = dataStatus
            try coder.uint8(&addressType, field: "Address_Type")
            try coder.address(&address)
            try coder.uint8(&primaryPHY, field: "Primary_PHY")
            // 0x00: no packets on the secondary advertising channel.
            var secondary = secondaryPHY?.rawValue ?? 0
            try coder.uint8(&secondary)
            if secondary == 0 {
                secondaryPHY = nil
            } else {
                guard let phy = LEPhy(rawValue: secondary) else {
                    throw .invalidValue(context: coder.context, field: "Secondary_PHY", value: UInt64(secondary))
                }
                secondaryPHY = phy
            }
            // 0xFF: no ADI field.
            var sid = advertisingSID ?? 0xFF
            try coder.uint8(&sid)
            try coder.check(sid <= 0x0F || sid == 0xFF, field: "Advertising_SID", value: sid)
            advertisingSID = sid == 0xFF ? nil : sid
            try coder.optionalPower(&txPower)
            try coder.optionalPower(&rssi)
            try coder.uint16(&periodicAdvertisingInterval)
            try coder.uint8(&directAddressType, field: "Direct_Address_Type")
            try coder.address(&directAddress)
            try coder.lengthPrefixedBytes(&data, maximum: LEExtendedAdvertisingReportEvent.maximumDataLength, field: "Data_Length")
        }

        public var description: String {
            "\(eventType) \(dataStatus) \(address)/\(addressType) \(primaryPHY) rssi=\(rssi.map { "\($0)" } ?? "n/a") [\(Hex.encode(data, separator: " "))]"
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
        "LE Extended Advertising Report " + reports.map(\.description).joined(separator: "; ")
    }
}
