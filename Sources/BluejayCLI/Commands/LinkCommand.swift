import ArgumentParser
import BluetoothCore
import BluetoothHost

/// `bluejay link`: connects, asks for a PHY, a data length and connection parameters, and
/// shows what is in effect.
struct LinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link",
        abstract: "Connect and set the link's PHY, data length and connection parameters; show what is in effect.",
        discussion: """
        Each setting is asked for in turn (PHY, data length, parameters); the values in effect are \
        printed, then the link is closed. A refusal by the controller or the peripheral is an error \
        naming who refused and the HCI status (e.g. Unsupported Remote Feature, 0x1A). Examples:
          bluejay link --address C0:FF:EE:00:11:22 --phy 2m --data-length max --parameters low-latency
          bluejay link --address C0:FF:EE:00:11:22 --parameters 30-45,4,6000
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var link: LinkOptions

    mutating func run() async throws {
        try await runReportingErrors {
            let output = Output(json: common.json)
            let (peripheral, link) = (peripheral, link)
            let connection = try await HostSession.run(common) { host in
                let connection = try await host.connect(peripheral)
                do {
                    try await link.apply(to: connection)
                } catch {
                    try? await connection.disconnect()
                    throw error
                }
                // LE Read PHY: what the controller says, in case no update was asked for.
                _ = try? await connection.readPHY()
                try await connection.disconnect()
                return connection
            }
            let (phy, length, parameters) = (connection.phy, connection.dataLength, connection.parameters)
            output.emit([
                "address": .string(connection.peer.description),
                "txPHY": .string(phy.tx.description), "rxPHY": .string(phy.rx.description),
                "maxTxOctets": .int(Int(length.maxTxOctets)), "maxTxTime": .int(Int(length.maxTxTime)),
                "maxRxOctets": .int(Int(length.maxRxOctets)), "maxRxTime": .int(Int(length.maxRxTime)),
                "intervalMilliseconds": .double(parameters.intervalMilliseconds), "peripheralLatency": .int(Int(parameters.peripheralLatency)),
                "supervisionTimeoutMilliseconds": .int(parameters.supervisionTimeoutMilliseconds),
            ], line: "PHY \(phy); data length \(length); \(parameters)")
        }
    }
}
