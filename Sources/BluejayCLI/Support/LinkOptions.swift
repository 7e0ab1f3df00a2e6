import ArgumentParser
import BluetoothHCI
import BluetoothHost

/// `--phy 1m|2m|coded|coded-s2|coded-s8`.
enum PHYChoice: String, ExpressibleByArgument, CaseIterable, Sendable {
    case le1M = "1m"
    case le2M = "2m"
    case coded
    case codedS2 = "coded-s2"
    case codedS8 = "coded-s8"

    var preference: PHYPreference {
        switch self {
        case .le1M: return .le1M
        case .le2M: return .le2M
        case .coded: return .leCoded
        case .codedS2: return .leCoded(.preferS2)
        case .codedS8: return .leCoded(.preferS8)
        }
    }
}

/// `--data-length max|27...251`.
struct DataLengthChoice: ExpressibleByArgument, Sendable {
    /// `nil`: the controller's maximum.
    var octets: UInt16?

    init?(argument: String) {
        if argument == "max" {
            octets = nil
        } else if let value = UInt16(argument), DataLength.octetRange.contains(value) {
            octets = value
        } else {
            return nil
        }
    }
}

/// `--parameters low-latency|balanced|low-power|MIN-MAX,LATENCY,TIMEOUT` (milliseconds).
struct ParametersChoice: ExpressibleByArgument, Sendable {
    var preference: ConnectionParameterPreference

    init?(argument: String) {
        switch argument {
        case "low-latency": preference = .lowLatency
        case "balanced": preference = .balanced
        case "low-power": preference = .lowPower
        default:
            let fields = argument.split(separator: ",")
            guard fields.count == 3 else { return nil }
            let interval = fields[0].split(separator: "-")
            guard (1...2).contains(interval.count), let low = Double(interval[0]), let high = Double(interval[interval.count - 1]),
                  low.isFinite, high.isFinite, low <= high,
                  let latency = UInt16(fields[1]), let timeout = Int(fields[2]) else { return nil }
            preference = ConnectionParameterPreference(intervalMilliseconds: low...high, peripheralLatency: latency, supervisionTimeoutMilliseconds: timeout)
        }
    }
}

/// What `link` (and the options of other commands) ask of a connection once it is up.
struct LinkOptions: ParsableArguments {
    @Option(name: .long, help: "Ask for a PHY: 1m, 2m, coded, coded-s2 or coded-s8 (LE Set PHY).")
    var phy: PHYChoice?

    @Option(name: .long, help: ArgumentHelp("Ask for longer LL data PDUs: max (the controller's maximum) or 27...251 octets.",
                                            valueName: "max|octets"))
    var dataLength: DataLengthChoice?

    @Option(name: .long, help: ArgumentHelp("""
        Ask for connection parameters: low-latency (11.25-15 ms, latency 0), balanced (30-50 ms, latency 0), \
        low-power (100-125 ms, latency 2), all with a 5 s supervision timeout, or MIN-MAX,LATENCY,TIMEOUT \
        in milliseconds (e.g. 30-45,4,6000).
        """, valueName: "preset|values"))
    var parameters: ParametersChoice?

    var isEmpty: Bool { phy == nil && dataLength == nil && parameters == nil }

    /// Applies each setting asked for, in order: PHY, data length, parameters.
    func apply(to connection: Connection) async throws {
        if let phy { _ = try await connection.setPHY(phy.preference) }
        if let dataLength { _ = try await connection.setDataLength(octets: dataLength.octets) }
        if let parameters { _ = try await connection.updateParameters(parameters.preference) }
    }
}
