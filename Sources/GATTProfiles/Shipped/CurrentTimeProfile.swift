import BluetoothCore

/// The Current Time service (Bluetooth SIG, Current Time Service 1.1).
public enum CurrentTimeProfile {
    public struct Service: ServiceConfigurable {
        public static let uuid = BluetoothUUID(UInt16(0x1805))
        public static let name = "Current Time"
        public static let tag = "Bluetooth SIG"
    }

    /// Current Time (0x2A2B), readable and notified: Exact Time 256 and the adjust reason,
    /// ten octets (Current Time Service 1.1, 3.1; GATT Specification Supplement, 3.62).
    public struct CurrentTime: BytesDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A2B))
        public static let name = "Current Time"
        public static let properties: CharacteristicProperties = [.read, .notify]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = nil
        public static let stringValues: [String] = []

        /// 1582 to 9999; 0 when unknown.
        public var year: UInt16
        /// 1 to 12; 0 when unknown.
        public var month: UInt8
        /// 1 to 31; 0 when unknown.
        public var day: UInt8
        public var hours: UInt8
        public var minutes: UInt8
        public var seconds: UInt8
        /// 1 (Monday) to 7 (Sunday); 0 when unknown.
        public var dayOfWeek: UInt8
        /// Fractions of a second in 1/256 units.
        public var fractions256: UInt8
        /// Bit 0 manual update, 1 external reference, 2 time zone change, 3 DST change.
        public var adjustReason: UInt8

        public init(year: UInt16, month: UInt8, day: UInt8, hours: UInt8, minutes: UInt8, seconds: UInt8,
                    dayOfWeek: UInt8 = 0, fractions256: UInt8 = 0, adjustReason: UInt8 = 0) {
            self.year = year
            self.month = month
            self.day = day
            self.hours = hours
            self.minutes = minutes
            self.seconds = seconds
            self.dayOfWeek = dayOfWeek
            self.fractions256 = fractions256
            self.adjustReason = adjustReason
        }

        public init(bytes: [UInt8]) throws(SerdeError) {
            guard bytes.count == 10 else { throw .wrongLength(type: "Current Time", expected: 10, actual: bytes.count) }
            self.init(year: try UInt16.deserialize(bytes, at: 0), month: bytes[2], day: bytes[3], hours: bytes[4], minutes: bytes[5],
                      seconds: bytes[6], dayOfWeek: bytes[7], fractions256: bytes[8], adjustReason: bytes[9])
            if let problem = validationProblem { throw .invalidValue(type: "Current Time", reason: problem) }
        }

        /// What is out of range, if anything.
        public var validationProblem: String? {
            if year != 0 && !(1582...9999).contains(year) { return "year \(year) is outside 1582...9999" }
            if month > 12 { return "month \(month) is above 12" }
            if day > 31 { return "day \(day) is above 31" }
            if hours > 23 { return "hour \(hours) is above 23" }
            if minutes > 59 { return "minute \(minutes) is above 59" }
            if seconds > 59 { return "second \(seconds) is above 59" }
            if dayOfWeek > 7 { return "day of week \(dayOfWeek) is above 7" }
            return nil
        }

        public func serialize() -> [UInt8] {
            year.serialize() + [month, day, hours, minutes, seconds, dayOfWeek, fractions256, adjustReason]
        }

        /// `["Current Time": "2024-03-05 14:07:09"]` and the other fields.
        public var stringValue: [String: String] {
            func two(_ value: UInt8) -> String { value < 10 ? "0\(value)" : "\(value)" }
            return ["Date": "\(year)-\(two(month))-\(two(day))", "Time": "\(two(hours)):\(two(minutes)):\(two(seconds))",
                    "Day Of Week": String(dayOfWeek), "Fractions256": String(fractions256), "Adjust Reason": String(adjustReason)]
        }

        public init?(stringValue: [String: String]) {
            let date = stringValue["Date"]?.split(separator: "-").map { String($0) } ?? []
            let time = stringValue["Time"]?.split(separator: ":").map { String($0) } ?? []
            guard date.count == 3, time.count == 3,
                  let year = UInt16(stringValue: date[0]), let month = UInt8(stringValue: date[1]), let day = UInt8(stringValue: date[2]),
                  let hours = UInt8(stringValue: time[0]), let minutes = UInt8(stringValue: time[1]),
                  let seconds = UInt8(stringValue: time[2]) else { return nil }
            self.init(year: year, month: month, day: day, hours: hours, minutes: minutes, seconds: seconds,
                      dayOfWeek: stringValue["Day Of Week"].flatMap { UInt8(stringValue: $0) } ?? 0,
                      fractions256: stringValue["Fractions256"].flatMap { UInt8(stringValue: $0) } ?? 0,
                      adjustReason: stringValue["Adjust Reason"].flatMap { UInt8(stringValue: $0) } ?? 0)
            guard validationProblem == nil else { return nil }
        }
    }

    /// Local Time Information (0x2A0F): the time zone in 15-minute steps (-48 to 56, -128
    /// unknown) and the daylight saving offset (0, 2, 4 or 8 quarter hours; 255 unknown).
    public struct LocalTimeInformation: RawPairDeserializable, CharacteristicConfigurable, StringDeserializable, Hashable {
        public static let uuid = BluetoothUUID(UInt16(0x2A0F))
        public static let name = "Local Time Information"
        public static let properties: CharacteristicProperties = [.read]
        public static let permissions: ProfileAttributePermissions = [.readable]
        public static let initialValue: [UInt8]? = nil
        public static let stringValues: [String] = []

        public let rawValue1: Int8
        public let rawValue2: UInt8

        public init?(rawValue1: Int8, rawValue2: UInt8) {
            guard rawValue1 == -128 || (-48...56).contains(rawValue1), [0, 2, 4, 8, 255].contains(rawValue2) else { return nil }
            self.rawValue1 = rawValue1
            self.rawValue2 = rawValue2
        }

        public var stringValue: [String: String] { ["Time Zone": String(rawValue1), "DST Offset": String(rawValue2)] }

        public init?(stringValue: [String: String]) {
            guard let zone = stringValue["Time Zone"].flatMap({ Int8(stringValue: $0) }),
                  let offset = stringValue["DST Offset"].flatMap({ UInt8(stringValue: $0) }) else { return nil }
            self.init(rawValue1: zone, rawValue2: offset)
        }
    }

    public static var service: ServiceProfile {
        ServiceProfile(Service.self, characteristics: [.structured(CurrentTime.self), .rawPair(LocalTimeInformation.self)])
    }
}
