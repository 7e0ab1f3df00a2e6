import BluetoothCore
import BluetoothHCI

/// Our host as a ``CentralBackend``: each requirement is the host's own procedure.
extension LEHost: CentralBackend {
    public nonisolated var backendName: String { "host" }
    public nonisolated var clock: BluetoothClock { configuration.clock }

    public func start() async throws {
        try await powerOn()
    }

    public func backendEvents() async -> AsyncStream<BackendEvent> {
        let events = events()
        let (stream, continuation) = AsyncStream.makeStream(of: BackendEvent.self)
        let watcher = Task {
            for await event in events {
                switch event {
                case let .transportClosed(reason):
                    continuation.yield(.unavailable(reason.map { "\($0)" } ?? "the HCI transport closed"))
                case let .identityResolved(connection, identity):
                    continuation.yield(.identityResolved(connection: connection, identity: identity))
                default:
                    break
                }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in watcher.cancel() }
        return stream
    }

    public func startScanning(_ options: ScanOptions, handler: @escaping @Sendable ([Advertisement]) -> Void,
                          onEnd: @escaping @Sendable (HostError?) -> Void) async throws {
        try await scan(options, handler: handler, onEnd: onEnd)
    }

    public func openConnection(to peer: DeviceAddress, timeout: Duration?) async throws -> any CentralConnection {
        try await connect(to: peer, timeout: timeout)
    }

    public func removeCachedDatabase(for peer: DeviceAddress) async {
        await gattDatabaseCache.removeDatabase(for: peer)
    }
}

/// Our host's connection as a ``CentralConnection``: GAP on the connection, GATT on its client.
extension Connection: CentralConnection {
    public var attMTU: UInt16 { gatt.mtu }

    public func pair(authenticated: Bool) async throws -> LinkSecurity {
        try await host.pair(self, authenticated: authenticated)
    }

    public func secure(authenticated: Bool) async throws -> LinkSecurity {
        try await host.secure(self, authenticated: authenticated)
    }

    public func prepareDatabase() async throws -> GATTDatabasePreparation {
        try await host.prepareDatabase(of: self)
    }

    public func discoverAllPrimaryServices() async throws -> [GATTService] { try await gatt.discoverAllPrimaryServices() }
    public func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTService] { try await gatt.discoverPrimaryServices(uuid: uuid) }
    public func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic] {
        try await gatt.discoverCharacteristics(of: service)
    }
    public func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        try await gatt.discoverDescriptors(of: characteristic)
    }
    public func discoverDatabase() async throws -> [GATTDiscoveredService] { try await gatt.discoverDatabase() }
    public func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] { try await gatt.read(characteristic) }
    public func read(_ descriptor: GATTDescriptor) async throws -> [UInt8] { try await gatt.read(descriptor) }
    public func startRead(handle: UInt16, raisingSecurity raises: Bool, within scope: RequestScope,
                          completion: @escaping @Sendable (StartedProcedure<[UInt8]>) -> Void) -> Bool {
        gatt.startReadLongValue(handle: handle, within: scope, completion: raisingSecurity(raises, again: { [gatt] in
            try await gatt.readLongValue(handle: handle)
        }, completion))
        return true
    }

    public func startWrite(_ value: [UInt8], handle: UInt16, raisingSecurity raises: Bool, within scope: RequestScope,
                           completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool {
        gatt.startWriteValue(value, handle: handle, within: scope, completion: raisingSecurity(raises, again: { [gatt] in
            try await gatt.writeValue(value, handle: handle)
        }, completion))
    }

    /// A started procedure's completion that, when `raises`, goes on after a refusal for the
    /// link's security by raising it and running `again`, as ``raisingSecurity(_:willRaise:)``.
    private func raisingSecurity<T: Sendable>(_ raises: Bool, again: @escaping @Sendable () async throws -> T,
                                              _ completion: @escaping @Sendable (StartedProcedure<T>) -> Void)
        -> @Sendable (StartedProcedure<T>) -> Void {
        guard raises else { return completion }
        return { [self] started in
            guard case let .unfinished(rest) = started else { return completion(started) }
            completion(.unfinished { [self] in try await raisingSecurity(first: rest, then: again) })
        }
    }
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws { try await gatt.write(value, to: characteristic) }
    public func write(_ value: [UInt8], to descriptor: GATTDescriptor) async throws { try await gatt.write(value, to: descriptor) }
    public func writeWithoutResponse(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        try await gatt.writeWithoutResponse(value, handle: characteristic.valueHandle)
    }
    public func writeSigned(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws { try await gatt.writeSigned(value, to: characteristic) }

    public func subscribeValues(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16?,
                                ended: @escaping @Sendable (HostError?) -> Void,
                                handler: @escaping @Sendable ([GATTValue]) -> Void) async throws -> any CentralSubscription {
        try await gatt.subscribe(to: characteristic, clientConfigurationHandle: clientConfigurationHandle, ended: ended, handler: handler)
    }

    public func unsubscribe(from characteristic: GATTCharacteristic) async throws { try await gatt.unsubscribe(from: characteristic) }
    public func serviceChanges() -> AsyncStream<GATTServiceChange> { gatt.serviceChanges() }
    public func enableServiceChangedIndications() async throws -> Bool { try await gatt.enableServiceChangedIndications() }
}

extension GATTNotificationSubscription: CentralSubscription {}
