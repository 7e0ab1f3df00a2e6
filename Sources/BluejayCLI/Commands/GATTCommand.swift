import ArgumentParser
import BluetoothCore
import BluetoothHost
import GATTProfiles

struct GATTCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatt",
        abstract: "Connect and show the peripheral's services, characteristics, descriptors and readable values."
    )

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @Option(name: .customLong("service"), help: "Show only this service (repeatable; default: every service), in the peripheral's order. Only its values are read.")
    var services: [String] = []

    mutating func run() async throws {
        let output = Output(json: common.json)
        let peripheral = peripheral
        let services = services
        try await runReportingErrors {
            let wanted = try services.map { try parseUUID($0, what: "service") }
            try await HostSession.runCentral(common) { host in
                let connection = try await host.connect(peripheral)
                let database = try await connection.discoverDatabase()
                let missing = wanted.filter { uuid in !database.contains { $0.service.uuid == uuid } }
                if !missing.isEmpty {
                    throw CLIError.notFound("\(missing.count == 1 ? "service" : "services") \(missing.map(\.description).joined(separator: ", ")) on \(connection.peer)")
                }
                // Named by the shipped profiles first (the TI SensorTag's vendor UUIDs), then the SIG's tables.
                let registry = ProfileRegistry.standard
                for entry in database where wanted.isEmpty || wanted.contains(entry.service.uuid) {
                    let service = entry.service
                    output.emit([
                        "type": .string("service"), "uuid": .string(service.uuid.description),
                        "start_handle": .int(Int(service.handleRange.lowerBound)), "end_handle": .int(Int(service.handleRange.upperBound)),
                        "name": .optional(registry.name(forService: service.uuid)),
                    ], line: "service \(service.uuid)\(named(registry.name(forService: service.uuid)))  handles \(Hex.format(service.handleRange.lowerBound, digits: 4))-\(Hex.format(service.handleRange.upperBound, digits: 4))")
                    for included in entry.includedServices {
                        output.emit(["type": .string("included_service"), "uuid": .string(included.service.uuid.description),
                                     "service": .string(service.uuid.description)],
                                    line: "  includes \(included.service.uuid)")
                    }
                    for item in entry.characteristics {
                        let characteristic = item.characteristic
                        var fields: [String: JSONValue] = [
                            "type": .string("characteristic"), "service": .string(service.uuid.description),
                            "uuid": .string(characteristic.uuid.description),
                            "handle": .int(Int(characteristic.declarationHandle)), "value_handle": .int(Int(characteristic.valueHandle)),
                            "properties": .array(characteristic.properties.names.map(JSONValue.string)),
                            "name": .optional(registry.name(forCharacteristic: characteristic.uuid, inService: service.uuid)),
                        ]
                        var valueText = ""
                        if characteristic.properties.contains(.read) {
                            do {
                                let value = try await connection.read(characteristic)
                                fields["value"] = .hex(value)
                                valueText = "  value \(describe(value))"
                            } catch let HostError.att(error) {
                                fields["error"] = .string("\(error.code)")
                                valueText = "  (read refused: \(error.code))"
                            }
                        }
                        output.emit(fields, line: "  characteristic \(characteristic.uuid)\(named(registry.name(forCharacteristic: characteristic.uuid, inService: service.uuid)))  handle \(Hex.format(characteristic.valueHandle, digits: 4))  [\(characteristic.properties)]\(valueText)")
                        for descriptor in item.descriptors {
                            var fields: [String: JSONValue] = [
                                "type": .string("descriptor"), "characteristic": .string(characteristic.uuid.description),
                                "uuid": .string(descriptor.uuid.description), "handle": .int(Int(descriptor.handle)),
                                "name": .optional(GATTNames.name(forDescriptor: descriptor.uuid)),
                            ]
                            let valueText = try await readDescriptor(descriptor, on: connection, into: &fields)
                            output.emit(fields, line: "    descriptor \(descriptor.uuid)\(named(GATTNames.name(forDescriptor: descriptor.uuid)))  handle \(Hex.format(descriptor.handle, digits: 4))\(valueText)")
                        }
                    }
                }
                try await connection.disconnect(reason: .remoteUserTerminatedConnection)
            }
        }
    }
}

/// Reads a descriptor (the declaration does not say whether it is readable, so a refusal
/// is shown, not an error) and decodes it: User Description text, Presentation Format
/// fields, CCCD bits. Returns the text for the line; adds `value`, `decoded` or `error`.
private func readDescriptor(_ descriptor: GATTDescriptor, on connection: any CentralConnection,
                            into fields: inout [String: JSONValue]) async throws -> String {
    let value: [UInt8]
    do {
        value = try await connection.read(descriptor)
    } catch let HostError.att(error) {
        fields["error"] = .string("\(error.code)")
        return "  (read refused: \(error.code))"
    }
    fields["value"] = .hex(value)
    do {
        let decoded = try DescriptorValue(uuid: descriptor.uuid, bytes: value)
        if case .other = decoded { return "  value \(describe(value))" }
        fields["decoded"] = .string(decoded.description)
        return "  \(decoded)"
    } catch {
        // A malformed value of a known descriptor: the octets, and why.
        fields["decode_error"] = .string("\(error)")
        return "  value \(Hex.encode(value)) (\(error))"
    }
}

/// `" (Heart Rate)"` for a well-known UUID, else nothing.
func named(_ name: String?) -> String {
    name.map { " (\($0))" } ?? ""
}

/// Hex, plus the text when the value is printable UTF-8.
func describe(_ value: [UInt8]) -> String {
    let hex = Hex.encode(value)
    if !value.isEmpty, let text = String(validating: value, as: UTF8.self),
       text.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) {
        return "\(hex) \"\(text)\""
    }
    return value.count > 32 ? "\(Hex.encode(value.prefix(32)))… (\(value.count) bytes)" : hex
}
