import BluetoothCore
import BluetoothHost

extension CentralBackend {
    /// Connects to the peripheral named on the command line, mapping "no answer" to
    /// "device not found".
    func connect(_ options: PeripheralOptions) async throws -> any CentralConnection {
        let peer = try options.deviceAddress()
        do {
            return try await openConnection(to: peer, timeout: options.connectTimeout.duration)
        } catch HostError.connectionTimeout {
            throw CLIError.deviceNotFound("\(peer) did not accept a connection within \(options.connectTimeout) s (is it advertising and in range? add --random for a random address)")
        }
    }
}

extension LEHost {
    /// Connects to the peripheral named on the command line (our host's connection).
    func connect(_ options: PeripheralOptions) async throws -> Connection {
        let peer = try options.deviceAddress()
        do {
            return try await connect(to: peer, timeout: options.connectTimeout.duration)
        } catch HostError.connectionTimeout {
            throw CLIError.deviceNotFound("\(peer) did not accept a connection within \(options.connectTimeout) s (is it advertising and in range? add --random for a random address)")
        }
    }
}

extension CentralConnection {
    /// ``BluetoothHost/CentralConnection/raisingSecurity(_:willRaise:)``, saying on stderr that the
    /// peripheral asked for an encrypted link.
    func raisingSecurityWithNotice<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await raisingSecurity(body, willRaise: { _ in Output.error("\(peer) needs an encrypted link: pairing") })
    }
}

extension CentralBackend {
    /// The scan as a stream of advertisements (the handler's batches, in order); it finishes
    /// after ``CentralBackend/stopScanning()`` and throws when the scan fails.
    func advertisements(_ options: ScanOptions) async throws -> ValueStream<Advertisement> {
        let (stream, continuation) = ValueStream.makeStream(of: Advertisement.self, limit: LEHost.scanBufferLimit)
        try await startScanning(options, handler: { advertisements in
            _ = continuation.yield(contentsOf: advertisements)
        }, onEnd: { error in
            continuation.finish(throwing: error)
        })
        return stream
    }
}

extension CentralConnection {
    /// The characteristic's values as a stream, one value each (what `listen` prints).
    func valueStream(of characteristic: GATTCharacteristic) async throws -> ValueStream<[UInt8]> {
        let (stream, continuation) = ValueStream.makeStream(of: [UInt8].self, limit: GATTClient.subscriberBufferLimit)
        let subscription = try await subscribeValues(to: characteristic, clientConfigurationHandle: nil, ended: { error in
            continuation.finish(throwing: error)
        }, handler: { values in
            _ = continuation.yield(contentsOf: values.map { Array($0.value) })
        })
        continuation.onTermination = { subscription.cancel() }
        return stream
    }
}
