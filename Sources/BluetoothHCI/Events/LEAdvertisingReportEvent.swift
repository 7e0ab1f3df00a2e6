import BluetoothCore

/// LE Advertising Report (Core 6.0, Vol 4, Part E, 7.7.65.2): legacy advertising PDUs and scan
/// responses received while scanning.
///
/// On the wire, after Num_Reports, each report's fields follow one another (event type,
/// address type, address, data length, data, RSSI), then the next report's: real controllers
/// and Bumble lay the reports out one by one.
public struct LEAdvertisingReportEvent: HCILEMetaEventParameters, CustomStringConvertible {
    public static let subeventCode: UInt8 = 0x02
    public static let name = "LE Advertising Report"
    /// Legacy advertising data is at most 31 octets.
    public static let maximumDataLength = 31

    /// One received advertising PDU or scan response.
    public struct Report: Sendable, Equatable, CustomStringConvertible {
        public var eventType: AdvertisingReportEventType
        public var addressType: AddressType
        public var address: BluetoothAddress
        /// At most 31 octets.
        public var data: [UInt8]
        /// dBm; `nil` when the controller reports 127 ("not available").
        public var rssi: Int8?

        public init(eventType: AdvertisingReportEventType, addressType: AddressType, address: BluetoothAddress, data: [UInt8], rssi: Int8?) {
            self.eventType = eventType
            self.addressType = addressType
            self.address = address
            self.data = data
            self.rssi = rssi
        }

        /// The advertiser as an address with its type.
        public var advertiser: DeviceAddress { DeviceAddress(address, type: addressType) }

        init(reading reader: inout ByteReader) throws(PacketDecodingError) {
            eventType = try reader.readEnum(field: "Event_Type")
            addressType = try reader.readEnum(field: "Address_Type")
            address = try reader.readAddress()
            data = try reader.readLengthPrefixedBytes(maximum: LEAdvertisingReportEvent.maximumDataLength, field: "Data_Length")
            rssi = try reader.readOptionalPower()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(eventType.rawValue)
            writer.write(addressType.rawValue)
            writer.write(address)
            writer.write(UInt8(truncatingIfNeeded: data.count))
            writer.write(contentsOf: data)
            writer.writeOptionalPower(rssi)
        }

        public var description: String {
            "\(eventType) \(advertiser) rssi=\(rssi.map { "\($0)" } ?? "n/a") [\(Hex.encode(data, separator: " "))]"
        }
    }

    public var reports: [Report]

    public init(reports: [Report]) { self.reports = reports }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        let count = Int(try reader.readUInt8())
        var reports: [Report] = []
        reports.reserveCapacity(count)
        for _ in 0..<count { reports.append(try Report(reading: &reader)) }
        try reader.expectEnd()
        self.reports = reports
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: reports.count))
        for report in reports { report.write(to: &writer) }
    }

    public var description: String {
        "LE Advertising Report " + reports.map(\.description).joined(separator: "; ")
    }
}
