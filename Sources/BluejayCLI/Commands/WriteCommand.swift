import ArgumentParser
import BluetoothCore
import BluetoothHost

struct WriteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "write",
        abstract: "Write a characteristic's value (long values use prepared writes)."
    )

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var security: SecurityOptions
    @Option(help: "The service UUID.") var service: String
    @Option(help: "The characteristic UUID.") var characteristic: String
    @Option(help: "The value in hex, e.g. 0102ff.") var value: String
    @Flag(help: "Write without response (the value must fit in one PDU).") var withoutResponse = false

    mutating func run() async throws {
        try await runReportingErrors {
            let serviceUUID = try parseUUID(service, what: "service")
            let characteristicUUID = try parseUUID(characteristic, what: "characteristic")
            guard let bytes = Hex.decode(value) else { throw CLIError.usage("\"\(value)\" is not hex (e.g. 0102ff)") }
            let output = Output(json: common.json)
            let (peripheral, withoutResponse) = (peripheral, withoutResponse)
            try await HostSession.runCentral(common, security: security) { host in
                let connection = try await host.connect(peripheral)
                let target = try await connection.findCharacteristic(characteristicUUID, inService: serviceUUID)
                if withoutResponse {
                    try await connection.raisingSecurityWithNotice { try await connection.writeWithoutResponse(bytes, to: target) }
                } else {
                    try await connection.raisingSecurityWithNotice { try await connection.write(bytes, to: target) }
                }
                try await connection.disconnect(reason: .remoteUserTerminatedConnection)
            }
            output.emit(["characteristic": .string(characteristicUUID.description), "written": .int(bytes.count),
                         "with_response": .bool(!withoutResponse)],
                        line: "wrote \(bytes.count) byte(s) to \(characteristicUUID)\(withoutResponse ? " without response" : "")")
        }
    }
}
