import BluetoothCore
import BluetoothHCI

/// Our host as a ``PeripheralBackend``: its GATT server is the ATT server of every link.
extension LEHost: PeripheralBackend {
    public nonisolated var configuredDeviceName: String { configuration.deviceName }

    public func servicesDidChange() async throws {}

    public func pushValue(_ value: [UInt8], forHandle valueHandle: UInt16) async throws(GATTServerError) -> GATTValueUpdate {
        try await server.updateValue(value, forHandle: valueHandle)
    }

    public func subscriptions(forHandle valueHandle: UInt16) async -> [GATTSubscription] {
        await server.subscriptions(forHandle: valueHandle)
    }

    public func serverEvents() async -> AsyncStream<GATTServerEvent> {
        await server.events()
    }

    public func peripheralLinkEvents() async -> AsyncStream<PeripheralLinkEvent> {
        let events = events()
        let (stream, continuation) = AsyncStream.makeStream(of: PeripheralLinkEvent.self)
        let watcher = Task {
            for await event in events {
                switch event {
                case let .connected(connection) where connection.role == .peripheral:
                    continuation.yield(.connected(handle: connection.handle, address: connection.identity ?? connection.peer))
                case let .identityResolved(connection, identity) where connection.role == .peripheral:
                    continuation.yield(.identityResolved(handle: connection.handle, identity: identity))
                case let .bondReplaced(connection, replacement) where connection.role == .peripheral:
                    continuation.yield(.bondReplaced(handle: connection.handle, address: connection.identity ?? connection.peer, replacement: replacement))
                case let .disconnected(connection, reason) where connection.role == .peripheral:
                    continuation.yield(.disconnected(handle: connection.handle, address: connection.identity ?? connection.peer, reason: reason))
                case .transportClosed:
                    continuation.yield(.closed)
                default:
                    break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in watcher.cancel() }
        return stream
    }

    public func connectedCentrals() async -> [(handle: UInt16, address: DeviceAddress?)] {
        connections.map { (handle: $0.handle, address: $0.identity ?? $0.peer) }
    }
}
