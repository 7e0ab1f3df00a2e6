import BluetoothCore
import BluetoothHost

extension LEHost {
    /// Connects to the peripheral named on the command line, mapping "no answer" to
    /// "device not found".
    func connect(_ options: PeripheralOptions) async throws -> Connection {
        let peer = try options.deviceAddress()
        do {
            return try await connect(to: peer, timeout: options.connectTimeout.duration)
        } catch HostError.connectionTimeout {
            throw CLIError.deviceNotFound("\(peer) did not accept a connection within \(options.connectTimeout) s (is it advertising and in range? add --random for a random address)")
        }
    }
}

extension Connection {
    /// ``BluetoothHost/Connection/raisingSecurity(_:willRaise:)``, saying on stderr that the
    /// peripheral asked for an encrypted link.
    func raisingSecurityWithNotice<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await raisingSecurity(body, willRaise: { _ in Output.error("\(peer) needs an encrypted link: pairing") })
    }
}
