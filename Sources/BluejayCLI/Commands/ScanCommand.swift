import ArgumentParser
import BluetoothCore
import BluetoothHost

struct ScanCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scan",
        abstract: "List the devices that advertise nearby.",
        discussion: "Scan-response data is merged into each device's advertisement."
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Seconds to scan (0 to 86400).")
    var duration = Seconds(whole: 5)

    @Option(name: .customLong("service"), help: "Only devices advertising this service UUID (repeatable).")
    var services: [String] = []

    @Flag(help: "Report every advertisement, not only the first (and changes) of each device.")
    var duplicates = false

    @Flag(help: "Passive scanning: listen only, send no scan requests (no scan responses).")
    var passive = false

    @Flag(help: "Also scan LE Coded (long range), when the controller scans with the extended commands.")
    var coded = false

    @Option(help: ArgumentHelp("Stop as soon as a device with this address or local name is seen; exit 69 if none is within --duration.",
                               valueName: "address-or-name"))
    var find: String?

    mutating func run() async throws {
        try await runReportingErrors {
            let uuids = try services.map { try parseUUID($0, what: "service") }
            var scanOptions = ScanOptions(active: !passive, filterDuplicates: !duplicates, serviceUUIDs: uuids)
            if coded { scanOptions.phys = [.le1M, .leCoded] }
            let options = scanOptions
            let output = Output(json: common.json)
            let duration = duration
            let streamEach = common.json || duplicates
            let wanted = find
            let found = try await HostSession.runCentral(common) { host in
                let discoveries = try await host.advertisements(options)
                let timer = Task {
                    try? await Task.sleep(for: duration.duration)
                    await host.stopScanning()
                }
                defer { timer.cancel() }
                var latest: [DeviceAddress: Advertisement] = [:]
                var order: [DeviceAddress] = []
                for try await advertisement in discoveries {
                    if latest[advertisement.peer] == nil { order.append(advertisement.peer) }
                    latest[advertisement.peer] = advertisement
                    if streamEach {
                        output.emit(advertisement.json, line: advertisement.tableRow.joined(separator: "  "))
                    }
                    if let wanted, advertisement.matches(wanted) {
                        await host.stopScanning()
                        break
                    }
                }
                return order.compactMap { latest[$0] }
            }
            if let wanted, !found.contains(where: { $0.matches(wanted) }) {
                throw CLIError.deviceNotFound("no device with address or name \"\(wanted)\" within \(duration) s")
            }
            if !streamEach {
                output.table(header: ["ADDRESS", "TYPE", "RSSI", "CONN", "NAME", "SERVICES", "DATA"], rows: found.map(\.tableRow))
                if found.isEmpty { print("(no devices found in \(duration) s)") }
            }
        }
    }
}

extension Advertisement {
    /// Whether `text` is its address (any case) or its local name.
    func matches(_ text: String) -> Bool {
        peer.address.description == text.uppercased() || localName == text
    }

    var tableRow: [String] {
        let data = self.data
        var extras: [String] = []
        for manufacturer in data.allManufacturerData {
            extras.append("mfr \(Hex.format(manufacturer.companyID)): \(Hex.encode(manufacturer.data))")
        }
        for service in data.serviceData { extras.append("svc \(service.uuid): \(Hex.encode(service.data))") }
        if let tx = txPower { extras.append("tx \(tx) dBm") }
        if isExtended { extras.append("extended \(primaryPHY?.description ?? "?")/\(secondaryPHY?.description ?? "?")") }
        if isDataTruncated { extras.append("truncated") }
        if isDataPartial { extras.append("partial") }
        return [
            peer.address.description, peer.type.base.description, rssi.map { "\($0)" } ?? "?",
            isConnectable ? "yes" : "no", localName ?? "-",
            serviceUUIDs.isEmpty ? "-" : serviceUUIDs.map(\.description).joined(separator: ","),
            extras.joined(separator: "; "),
        ]
    }

    var json: [String: JSONValue] {
        let data = self.data
        var fields: [String: JSONValue] = [
            "address": .string(peer.address.description),
            "address_type": .string(peer.type.base.description),
            "rssi": .optional(rssi.map(Int.init)),
            "connectable": .bool(isConnectable),
            "name": .optional(localName),
            "services": .array(serviceUUIDs.map { .string($0.description) }),
            "advertising_data": .hex((try? advertisingData.encoded(maximumLength: AdvertisingData.extendedMaximumLength)) ?? []),
            "extended": .bool(isExtended),
            "truncated": .bool(isDataTruncated),
            "partial": .bool(isDataPartial),
        ]
        if let scanResponse { fields["scan_response"] = .hex((try? scanResponse.encoded(maximumLength: AdvertisingData.extendedMaximumLength)) ?? []) }
        if let primaryPHY { fields["primary_phy"] = .string(primaryPHY.description) }
        if let secondaryPHY { fields["secondary_phy"] = .string(secondaryPHY.description) }
        if let advertisingSID { fields["sid"] = .int(Int(advertisingSID)) }
        if let tx = txPower { fields["tx_power"] = .int(Int(tx)) }
        if let appearance = data.appearance { fields["appearance"] = .int(Int(appearance)) }
        fields["manufacturer_data"] = .array(data.allManufacturerData.map {
            .object(["company": .int(Int($0.companyID)), "data": .hex($0.data)])
        })
        fields["service_data"] = .array(data.serviceData.map {
            .object(["uuid": .string($0.uuid.description), "data": .hex($0.data)])
        })
        return fields
    }
}
