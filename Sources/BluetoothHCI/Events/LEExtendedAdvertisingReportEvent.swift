import BluetoothCore

/// LE Extended Advertising Report (Core 6.0, Vol 4, Part E, 7.7.65.13): legacy and extended
/// advertising received while extended scanning. Reports are laid out one after another, each
/// with its fields in order.
public struct LEExtendedAdvertisingReportEvent: HCILEMetaEventParameters, CustomStringConvertible {
    public static let subeventCode: UInt8 = 0x0D
    public static let name = "LE Extended Advertising Report"
    /// The most data one report carries (Data_Length 0...229), so that the event fits in 255 octets.
    public static let maximumDataLength = 229

    /// One received advertisement or fragment of one.
    public struct Report: Sendable, Equatable, CustomStringConvertible {
        public var eventType: ExtendedAdvertisingEventType
        /// Whether ``data`` is complete or more fragments follow.
        public var dataStatus: AdvertisingDataStatus
        public var addressType: ExtendedReportAddressType
        public var address: BluetoothAddress
        /// LE 1M or LE Coded.
        public var primaryPHY: LEPhy
        /// `nil` when no packets were received on the secondary advertising channel (0x00).
        public var secondaryPHY: LEPhy?
        /// The advertising set identifier 0...15; `nil` when no ADI field was present (0xFF).
        public var advertisingSID: UInt8?
        /// dBm; `nil` when not available (127).
        public var txPower: Int8?
        /// dBm; `nil` when not available (127).
        public var rssi: Int8?
        /// In units of 1.25 ms; 0 when there is no periodic advertising.
        public var periodicAdvertisingInterval: UInt16
        public var directAddressType: ExtendedReportAddressType
        /// The target of directed advertising; zero otherwise.
        public var directAddress: BluetoothAddress
        /// At most 229 octets.
        public var data: [UInt8]

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

        init(reading reader: inout ByteReader) throws(PacketDecodingError) {
            let rawType = try reader.readUInt16()
            eventType = ExtendedAdvertisingEventType(rawValue: rawType & ExtendedAdvertisingEventType.propertyMask)
            let status = UInt8(truncatingIfNeeded: (rawType >> 5) & 0b11)
            guard let dataStatus = AdvertisingDataStatus(rawValue: status) else {
                throw .invalidValue(context: reader.context, field: "Event_Type data status", value: UInt64(status))
            }
            self.dataStatus = dataStatus
            addressType = try reader.readEnum(field: "Address_Type")
            address = try reader.readAddress()
            primaryPHY = try reader.readEnum(field: "Primary_PHY")
            let secondary = try reader.readUInt8()
            if secondary == 0 {
                secondaryPHY = nil
            } else {
                guard let phy = LEPhy(rawValue: secondary) else {
                    throw .invalidValue(context: reader.context, field: "Secondary_PHY", value: UInt64(secondary))
                }
                secondaryPHY = phy
            }
            let sid = try reader.readUInt8()
            guard sid <= 0x0F || sid == 0xFF else {
                throw .invalidValue(context: reader.context, field: "Advertising_SID", value: UInt64(sid))
            }
            advertisingSID = sid == 0xFF ? nil : sid
            txPower = try reader.readOptionalPower()
            rssi = try reader.readOptionalPower()
            periodicAdvertisingInterval = try reader.readUInt16()
            directAddressType = try reader.readEnum(field: "Direct_Address_Type")
            directAddress = try reader.readAddress()
            data = try reader.readLengthPrefixedBytes(maximum: LEExtendedAdvertisingReportEvent.maximumDataLength, field: "Data_Length")
        }

        func write(to writer: inout ByteWriter) {
            writer.write(eventType.rawValue & ExtendedAdvertisingEventType.propertyMask | UInt16(dataStatus.rawValue) << 5)
            writer.write(addressType.rawValue)
            writer.write(address)
            writer.write(primaryPHY.rawValue)
            writer.write(secondaryPHY?.rawValue ?? 0)
            writer.write(advertisingSID ?? 0xFF)
            writer.writeOptionalPower(txPower)
            writer.writeOptionalPower(rssi)
            writer.write(periodicAdvertisingInterval)
            writer.write(directAddressType.rawValue)
            writer.write(directAddress)
            writer.write(UInt8(truncatingIfNeeded: data.count))
            writer.write(contentsOf: data)
        }

        public var description: String {
            "\(eventType) \(dataStatus) \(address)/\(addressType) \(primaryPHY) rssi=\(rssi.map { "\($0)" } ?? "n/a") [\(Hex.encode(data, separator: " "))]"
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
        "LE Extended Advertising Report " + reports.map(\.description).joined(separator: "; ")
    }
}
