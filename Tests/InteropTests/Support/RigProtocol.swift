import BluetoothCore
import Foundation

/// A JSON value as the Bumble peer (`Tests/InteropTests/bumble/peer.py`) writes it: events
/// arrive as JSON objects, one per line, and commands leave the same way.
enum RigJSON: Sendable, Equatable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([RigJSON])
    case object([String: RigJSON])

    /// Converts a value built from `String`, `Int`, `Double`, `Bool`, `[UInt8]` (as hex),
    /// arrays, `[String: Any]` and `NSNull`; `nil` for anything else.
    init?(any value: Any) {
        switch value {
        case let json as RigJSON: self = json
        case let text as String: self = .string(text)
        case let flag as Bool: self = .bool(flag)
        case let bytes as [UInt8]: self = .string(Hex.encode(bytes))
        case let number as Int: self = .number(Double(number))
        case let number as UInt8: self = .number(Double(number))
        case let number as UInt16: self = .number(Double(number))
        case let number as Int64: self = .number(Double(number))
        case let number as Double: self = .number(number)
        case is NSNull: self = .null
        case let array as [Any]:
            var items: [RigJSON] = []
            for item in array {
                guard let json = RigJSON(any: item) else { return nil }
                items.append(json)
            }
            self = .array(items)
        case let dictionary as [String: Any]:
            var fields: [String: RigJSON] = [:]
            for (key, item) in dictionary {
                guard let json = RigJSON(any: item) else { return nil }
                fields[key] = json
            }
            self = .object(fields)
        default: return nil
        }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([RigJSON].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: RigJSON].self))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(flag): try container.encode(flag)
        case let .number(number):
            if let integer = Int(exactly: number) { try container.encode(integer) } else { try container.encode(number) }
        case let .string(text): try container.encode(text)
        case let .array(array): try container.encode(array)
        case let .object(fields): try container.encode(fields)
        }
    }

    var intValue: Int? { if case let .number(number) = self { return Int(exactly: number) } else { return nil } }
    var doubleValue: Double? { if case let .number(number) = self { return number } else { return nil } }
    var stringValue: String? { if case let .string(text) = self { return text } else { return nil } }
    var boolValue: Bool? { if case let .bool(flag) = self { return flag } else { return nil } }
    var arrayValue: [RigJSON]? { if case let .array(array) = self { return array } else { return nil } }
    var objectValue: [String: RigJSON]? { if case let .object(fields) = self { return fields } else { return nil } }

    /// The JSON text, keys sorted.
    var description: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "<unencodable>" }
        return String(decoding: data, as: UTF8.self)
    }
}

/// One line the peer wrote on its stdout: `{"event":"NAME", ...fields}`.
struct RigEvent: Sendable, Equatable, CustomStringConvertible {
    /// The `event` field: `ready`, `ack`, `error`, `connected`, `written`, …
    let name: String
    /// Every field of the line, `event` included.
    let fields: [String: RigJSON]
    /// The line as received, for messages.
    let line: String

    /// Parses one stdout line; a line that is not a JSON object becomes an `unparsed` event.
    init(line: String) {
        self.line = line
        if let data = line.data(using: .utf8),
           let fields = try? JSONDecoder().decode([String: RigJSON].self, from: data) {
            self.fields = fields
            self.name = fields["event"]?.stringValue ?? "unnamed"
        } else {
            self.fields = ["line": .string(line)]
            self.name = "unparsed"
        }
    }

    subscript(key: String) -> RigJSON? { fields[key] }
    func int(_ key: String) -> Int? { fields[key]?.intValue }
    func string(_ key: String) -> String? { fields[key]?.stringValue }
    func bool(_ key: String) -> Bool? { fields[key]?.boolValue }
    /// A field holding hex text (`value` of `written`, for example) as bytes.
    func bytes(_ key: String) -> [UInt8]? { fields[key]?.stringValue.flatMap(Hex.decode) }

    var description: String { line }
}

/// A command for the peer. Build one with the static functions (they mirror the protocol in
/// `Tests/InteropTests/bumble/README.md`) or with ``init(_:_:)`` for anything else.
struct RigCommand: Sendable, CustomStringConvertible {
    /// The `cmd` field.
    var name: String
    /// The other fields.
    var fields: [String: RigJSON]

    init(_ name: String, _ fields: [String: RigJSON] = [:]) {
        self.name = name
        self.fields = fields
    }

    /// The command as sent, with the `id` the rig gives it.
    func json(id: Int?) -> RigJSON {
        var object = fields
        object["cmd"] = .string(name)
        if let id { object["id"] = .number(Double(id)) }
        return .object(object)
    }

    var description: String { json(id: nil).description }

    private static func on(_ peripheral: Int, _ fields: [String: RigJSON]) -> [String: RigJSON] {
        var fields = fields
        fields["peripheral"] = .number(Double(peripheral))
        return fields
    }

    // Peripheral role ------------------------------------------------------------

    /// Sends `count` notifications and acks once the last one is handed to the peer's
    /// controller. Payload number `n` (from `start`): 2A37 `01` + UInt16 LE n, 2A19 one byte
    /// n % 256, any other UUID UInt32 LE n zero-padded to `size`; or `value` every time.
    static func notify(uuid: String, count: Int, intervalMilliseconds: Int = 0, start: Int = 0, size: Int? = nil, value: [UInt8]? = nil, peripheral: Int = 1) -> RigCommand {
        var fields: [String: RigJSON] = ["uuid": .string(uuid), "count": .number(Double(count)), "interval_ms": .number(Double(intervalMilliseconds)), "start": .number(Double(start))]
        if let size { fields["size"] = .number(Double(size)) }
        if let value { fields["value"] = .string(Hex.encode(value)) }
        return RigCommand("notify", on(peripheral, fields))
    }

    /// Like ``notify(uuid:count:intervalMilliseconds:start:size:value:peripheral:)`` but acks
    /// at once and sends in the background; a `streamed` event reports the end.
    static func stream(uuid: String, count: Int, intervalMilliseconds: Int = 0, start: Int = 0, size: Int? = nil, peripheral: Int = 1) -> RigCommand {
        var command = notify(uuid: uuid, count: count, intervalMilliseconds: intervalMilliseconds, start: start, size: size, peripheral: peripheral)
        command.name = "stream"
        return command
    }

    /// Sends `count` indications, each after the previous one was confirmed; an `indicated`
    /// event then the ack report how many were confirmed.
    static func indicate(uuid: String, count: Int, start: Int = 0, peripheral: Int = 1) -> RigCommand {
        RigCommand("indicate", on(peripheral, ["uuid": .string(uuid), "count": .number(Double(count)), "start": .number(Double(start))]))
    }

    /// Replaces a characteristic's value (no notification).
    static func set(uuid: String, value: [UInt8], peripheral: Int = 1) -> RigCommand {
        RigCommand("set", on(peripheral, ["uuid": .string(uuid), "value": .string(Hex.encode(value))]))
    }

    /// The peripheral ends its links with `reason` (default 0x13, Remote User Terminated).
    static func disconnect(reason: UInt8 = 0x13, peripheral: Int = 1) -> RigCommand {
        RigCommand("disconnect", on(peripheral, ["reason": .number(Double(reason))]))
    }

    /// The next read of `uuid` makes the peripheral disconnect (with `reason`) instead of answering.
    static func dropOnNextRead(uuid: String, reason: UInt8 = 0x13, peripheral: Int = 1) -> RigCommand {
        RigCommand("drop_on_next_read", on(peripheral, ["uuid": .string(uuid), "reason": .number(Double(reason))]))
    }

    static func stopAdvertising(peripheral: Int = 1) -> RigCommand { RigCommand("stop_advertising", on(peripheral, [:])) }
    static func startAdvertising(peripheral: Int = 1) -> RigCommand { RigCommand("start_advertising", on(peripheral, [:])) }

    /// Adds service 6E400101-… (one readable characteristic 6E400102-…, value "added") and
    /// indicates Service Changed to subscribed centrals; the ack holds `start`, `end`, `indicated`.
    static func addService(peripheral: Int = 1) -> RigCommand { RigCommand("add_service", on(peripheral, [:])) }

    /// Removes a service (default the one ``addService(peripheral:)`` added) and indicates Service Changed.
    static func removeService(uuid: String? = nil, peripheral: Int = 1) -> RigCommand {
        var fields: [String: RigJSON] = [:]
        if let uuid { fields["uuid"] = .string(uuid) }
        return RigCommand("remove_service", on(peripheral, fields))
    }

    enum UARTChunks: String, Sendable { case whole, random }

    /// How UART answers are cut into notifications: as large as the MTU allows, or random sizes.
    static func uartMode(_ chunks: UARTChunks, seed: Int? = nil, peripheral: Int = 1) -> RigCommand {
        var fields: [String: RigJSON] = ["chunks": .string(chunks.rawValue)]
        if let seed { fields["seed"] = .number(Double(seed)) }
        return RigCommand("uart_mode", on(peripheral, fields))
    }

    /// What a recording characteristic (6E400007-…) received; the ack holds `values` (hex).
    static func received(uuid: String, clear: Bool = false, peripheral: Int = 1) -> RigCommand {
        RigCommand("received", on(peripheral, ["uuid": .string(uuid), "clear": .bool(clear)]))
    }

    /// Connections, advertising state and services of a peripheral, in the ack.
    static func status(peripheral: Int = 1) -> RigCommand { RigCommand("status", on(peripheral, [:])) }

    static let quit = RigCommand("quit")

    // Central role -----------------------------------------------------------------

    static func scan(active: Bool = true, deduplicate: Bool = true) -> RigCommand {
        RigCommand("scan", ["active": .bool(active), "dedup": .bool(deduplicate)])
    }

    static let stopScan = RigCommand("stop_scan")

    static func connect(address: String, addressType: String = "random", discover: Bool = true) -> RigCommand {
        RigCommand("connect", ["address": .string(address), "address_type": .string(addressType), "discover": .bool(discover)])
    }

    static let discover = RigCommand("discover")
    static func read(uuid: String) -> RigCommand { RigCommand("read", ["uuid": .string(uuid)]) }
    static func write(uuid: String, value: [UInt8], withResponse: Bool = true) -> RigCommand {
        RigCommand("write", ["uuid": .string(uuid), "value": .string(Hex.encode(value)), "with_response": .bool(withResponse)])
    }
    static func subscribe(uuid: String, indicate: Bool = false) -> RigCommand {
        RigCommand("subscribe", ["uuid": .string(uuid), "indicate": .bool(indicate)])
    }
    static func exchangeMTU(_ mtu: Int) -> RigCommand { RigCommand("mtu", ["value": .number(Double(mtu))]) }
    /// Central role: the central ends its link.
    static func centralDisconnect(reason: UInt8 = 0x13) -> RigCommand {
        RigCommand("disconnect", ["reason": .number(Double(reason))])
    }
}

/// The UUIDs of the peer's database (see `Tests/InteropTests/bumble/README.md`).
enum RigUUID {
    static let heartRateService = "180D"
    static let heartRateMeasurement = "2A37"
    static let bodySensorLocation = "2A38"
    static let deviceInformationService = "180A"
    static let manufacturerName = "2A29"
    static let modelNumber = "2A24"
    static let serialNumber = "2A25"
    static let firmwareRevision = "2A26"
    static let batteryService = "180F"
    static let batteryLevel = "2A19"
    static let serviceChanged = "2A05"
    static let customService = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
    /// UART RX: the central writes here (write, write without response).
    static let uartRX = "6E400002-B5A3-F393-E0A9-E50E24DCCA9E"
    /// UART TX: the peripheral answers here (notify).
    static let uartTX = "6E400003-B5A3-F393-E0A9-E50E24DCCA9E"
    /// 600 bytes, read and write; initially byte i is i % 256.
    static let longValue = "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Read and indicate.
    static let indicating = "6E400005-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Read, always refused with Read Not Permitted (0x02).
    static let readRefused = "6E400006-B5A3-F393-E0A9-E50E24DCCA9E"
    /// Write without response only; records what it receives.
    static let writeSink = "6E400007-B5A3-F393-E0A9-E50E24DCCA9E"
    static let dynamicService = "6E400101-B5A3-F393-E0A9-E50E24DCCA9E"
    static let dynamicValue = "6E400102-B5A3-F393-E0A9-E50E24DCCA9E"
}
