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
    /// Runs `body`; when the peripheral refuses it for the link's security (Insufficient
    /// Authentication or Insufficient Encryption, Core 6.0, Vol 3, Part C, 10.3.1), encrypts the
    /// link (stored keys, else pairing) and runs it once more.
    func raisingSecurity<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let HostError.att(error) where error.code == .insufficientAuthentication || error.code == .insufficientEncryption {
            Output.error("\(peer) needs an encrypted link: pairing")
            _ = try await host.secure(self, authenticated: error.code == .insufficientAuthentication && security.isEncrypted)
            return try await body()
        }
    }
}
