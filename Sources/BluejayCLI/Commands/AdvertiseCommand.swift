import ArgumentParser
import BluetoothCore
import BluetoothHCI
import BluetoothHost

/// `bluejay advertise`: advertises a name and optional manufacturer data, with legacy
/// advertising or, with `--extended`, an extended advertising set whose data may exceed 31
/// octets (up to the controller's maximum), on the PHYs asked for.
struct AdvertiseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "advertise",
        abstract: "Advertise a name (and manufacturer data) for a while.",
        discussion: """
        Without --extended: legacy advertising, 31 octets at most. With --extended: an advertising \
        set (Core 6.0, Vol 4, Part E, 7.8.53), data up to the controller's maximum, e.g. \
        `bluejay advertise --extended --name Long --filler 200 --seconds 10`. A set ends after \
        --seconds (the controller reports it) or when a central connects.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "The complete local name to advertise.")
    var name = "Bluejay"

    @Option(help: ArgumentHelp("Manufacturer Specific Data after the company identifier, hex.", valueName: "hex"))
    var manufacturerData: String?

    @Option(help: "Add this many octets of filler manufacturer data (company 0xFFFF), to try long extended advertising.")
    var filler = 0

    @Flag(help: "Use an extended advertising set (data beyond 31 octets).")
    var extended = false

    @Flag(help: "Extended: use legacy PDUs (every scanner hears them; 31 octets).")
    var legacyPDUs = false

    @Flag(help: "Accept connections.")
    var connectable = false

    @Option(help: "Extended: the PHY of the data, 1m, 2m or coded.")
    var secondaryPHY = "1m"

    @Flag(help: "Extended: advertise on LE Coded (long range) instead of LE 1M.")
    var coded = false

    @Option(help: "Seconds to advertise (0.01 to 655 with --extended; up to 86400 otherwise).")
    var seconds = Seconds(whole: 10)

    mutating func run() async throws {
        let (name, extended, connectable, legacyPDUs, coded, seconds) = (name, extended, connectable, legacyPDUs, coded, seconds)
        try await runReportingErrors {
            var fields: [ADField] = [.flags(.leGeneralDiscoverableMode), .completeLocalName(name)]
            if let manufacturerData {
                guard let bytes = Hex.decode(manufacturerData) else { throw CLIError.usage("\"\(manufacturerData)\" is not hex (e.g. 0102ff)") }
                fields.append(.manufacturerSpecificData(companyID: 0xFFFF, data: bytes))
            }
            guard (0...AdvertisingData.extendedMaximumLength).contains(filler) else {
                throw CLIError.usage("--filler is 0 to \(AdvertisingData.extendedMaximumLength) octets")
            }
            var remaining = filler
            while remaining > 0 {
                let count = min(remaining, 250)
                fields.append(.manufacturerSpecificData(companyID: 0xFFFF, data: [UInt8](repeating: 0xA5, count: count)))
                remaining -= count
            }
            let data = AdvertisingData(fields)
            let secondary: LEPhy
            switch secondaryPHY.lowercased() {
            case "1m": secondary = .le1M
            case "2m": secondary = .le2M
            case "coded": secondary = .leCoded
            default: throw CLIError.usage("--secondary-phy is 1m, 2m or coded")
            }
            let output = Output(json: common.json)
            guard extended else {
                // Legacy advertising: our host, or BlueZ's advertising manager.
                try await HostSession.runPeripheral(common, name: name) { backend in
                    try await backend.startAdvertising(data, scanResponse: nil,
                                                       parameters: AdvertisingParameters(isConnectable: connectable, isScannable: connectable))
                    output.emit(["event": .string("advertising"), "extended": .bool(false), "octets": .int(data.encodedLength)],
                                line: "advertising \"\(name)\" (legacy, \(data.encodedLength) octets) for \(seconds) s")
                    Console.flush()
                    try? await Task.sleep(for: seconds.duration)
                    // Stopped by a signal, the backend's shutdown stops advertising.
                    if !Task.isCancelled { try await backend.stopAdvertising() }
                    output.emit(["event": .string("stopped")], line: "stopped")
                }
                return
            }
            try await HostSession.run(common) { host in
                var parameters = ExtendedAdvertisingParameters(isConnectable: connectable, usesLegacyPDUs: legacyPDUs,
                                                               primaryPHY: coded ? .leCoded : .le1M, secondaryPHY: secondary)
                parameters.duration = seconds.duration
                let terminations = await host.advertisingSetTerminations()
                let set = try await host.startAdvertisingSet(data, parameters: parameters)
                let maximum = try await host.maximumAdvertisingDataLength()
                output.emit(["event": .string("advertising"), "extended": .bool(!set.isLegacyFallback), "handle": .int(Int(set.handle)),
                             "octets": .int(data.encodedLength), "maximum": .int(maximum)],
                            line: "advertising \"\(name)\" as \(set) (\(data.encodedLength) of at most \(maximum) octets) for \(seconds) s")
                Console.flush()
                if set.isLegacyFallback {
                    try? await Task.sleep(for: seconds.duration)
                    if !Task.isCancelled { try await host.stopAdvertisingSet(set) }
                    output.emit(["event": .string("stopped")], line: "stopped")
                    return
                }
                for await termination in terminations where termination.set.handle == set.handle {
                    let reason: String
                    switch termination.reason {
                    case .connected: reason = "connected"
                    case .timeout: reason = "timeout"
                    case .limitReached: reason = "limit"
                    case let .other(status): reason = "\(status)"
                    }
                    output.emit(["event": .string("terminated"), "reason": .string(reason), "events": .int(termination.completedEvents)],
                                line: "\(termination)")
                    break
                }
                if !Task.isCancelled { try? await host.stopAdvertisingSet(set) }
            }
        }
    }
}
