import ArgumentParser
import BluetoothCore
import BluetoothHost

struct ReadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "read", abstract: "Read a characteristic's value (long values too).")

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var security: SecurityOptions
    @Option(help: "The service UUID (180D or the 128-bit form).") var service: String
    @Option(help: "The characteristic UUID.") var characteristic: String
    @Option(help: ValueFormat.help) var format: ValueFormat = .hex

    mutating func run() async throws {
        try await runReportingErrors {
            let serviceUUID = try parseUUID(service, what: "service")
            let characteristicUUID = try parseUUID(characteristic, what: "characteristic")
            let output = Output(json: common.json)
            let (peripheral, format) = (peripheral, format)
            let value = try await HostSession.runCentral(common, security: security) { host in
                let connection = try await host.connect(peripheral)
                let target = try await connection.findCharacteristic(characteristicUUID, inService: serviceUUID)
                let value = try await connection.raisingSecurityWithNotice { try await connection.read(target) }
                try await connection.disconnect(reason: .remoteUserTerminatedConnection)
                return value
            }
            let formatted = try format.format(value)
            output.emit(["service": .string(serviceUUID.description), "characteristic": .string(characteristicUUID.description),
                         "value": .hex(value), "formatted": .string(formatted)],
                        line: formatted)
        }
    }
}
