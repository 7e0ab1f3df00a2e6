import ArgumentParser
import BluetoothCore
import BluetoothHost
import Foundation

struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Subscribe to a characteristic (notify or indicate, whichever it has) and print its values."
    )

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var security: SecurityOptions
    @Option(help: "The service UUID.") var service: String
    @Option(help: "The characteristic UUID.") var characteristic: String
    @Option(help: "Stop after this many values.") var count: Int?
    @Option(help: "Stop after this many seconds (0 to 86400); with --count, fewer values than asked is a timeout error.")
    var timeout: Seconds?
    @Option(help: ValueFormat.help) var format: ValueFormat?

    mutating func run() async throws {
        try await runReportingErrors {
            let serviceUUID = try parseUUID(service, what: "service")
            let characteristicUUID = try parseUUID(characteristic, what: "characteristic")
            if let count, count < 1 { throw CLIError.usage("--count must be at least 1") }
            let output = Output(json: common.json)
            let (peripheral, count, timeout, format) = (peripheral, count, timeout, format)
            let received = try await HostSession.runCentral(common, security: security) { host in
                let connection = try await host.connect(peripheral)
                let target = try await connection.findCharacteristic(characteristicUUID, inService: serviceUUID)
                let values = try await connection.raisingSecurityWithNotice { try await connection.valueStream(of: target) }
                let indicates = !target.properties.contains(.notify)
                let timer = timeout.map { seconds in
                    Task {
                        try? await Task.sleep(for: seconds.duration)
                        try? await connection.unsubscribe(from: target)
                    }
                }
                defer { timer?.cancel() }
                var received = 0
                for try await value in values {
                    received += 1
                    var fields: [String: JSONValue] = ["characteristic": .string(characteristicUUID.description), "index": .int(received),
                                                       "value": .hex(value), "indication": .bool(indicates),
                                                       "time": .double(Date().timeIntervalSince1970)]
                    var text = describe(value)
                    if let format {
                        // A value the format cannot read is shown in hex with why; the listen goes on.
                        do {
                            let formatted = try format.format(value)
                            fields["formatted"] = .string(formatted)
                            text = formatted
                        } catch {
                            fields["format_error"] = .string("\(error)")
                            text = "\(Hex.encode(value)) (\(error))"
                        }
                    }
                    output.emit(fields, line: "\(received)  \(text)")
                    // Each value reaches a pipe as it comes (`bluejay listen … | tee`).
                    Console.flush()
                    if let count, received >= count { break }
                }
                // Stopped by a signal, the host's shutdown disconnects.
                if connection.isConnected, !Task.isCancelled { try await connection.disconnect(reason: .remoteUserTerminatedConnection) }
                return received
            }
            if let count, received < count {
                if timeout != nil, !Task.isCancelled {
                    throw CLIError.timeout("received \(received) of \(count) value(s) within \(timeout.map(\.description) ?? "0") s")
                }
            }
        }
    }
}
