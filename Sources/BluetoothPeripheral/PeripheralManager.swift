import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import GATTProfiles
import Logging

/// The peripheral role, as BlueCap's PeripheralManager offers it, on a Bluejay `LEHost` or
/// on BlueZ (``init(backend:logger:)`` with a `BlueZPeripheral`): publish services, advertise (a name and service UUIDs, any fields, or an iBeacon), keep
/// characteristic values, push them to subscribed centrals, answer reads and writes.
///
/// Every operation has an async form and a callback form (the `completion:` variants in
/// PeripheralManager+Callbacks.swift).
///
/// ```swift
/// let manager = PeripheralManager(transport: try SystemTransports.open("tcp:127.0.0.1:9000"))
/// try await manager.powerOn()
/// let service = try await manager.add(PeripheralService(profile: TISensorTag.AccelerometerService.profile))
/// if let enabled = service.characteristic(TISensorTag.AccelerometerService.Enabled.uuid) {
///     let requests = await manager.writeRequests(for: enabled)
///     Task {
///         for await request in requests {
///             request.respond(request.value.count == 1 ? .success : .error(.invalidAttributeValueLength))
///         }
///     }
/// }
/// try await manager.startAdvertising(name: "SensorTag", serviceUUIDs: [service.uuid])
/// ```
public actor PeripheralManager {
    /// What this manager runs on: our host, or BlueZ.
    public nonisolated let backend: any PeripheralBackend
    /// Our host, when the manager runs on one (`nil` over BlueZ).
    public nonisolated var host: LEHost? { backend as? LEHost }
    let logger: Logger
    let router: RequestRouter

    /// Published services, in the order added.
    public internal(set) var services: [GATTPublishedService] = []
    /// Profiles of published characteristics, by value handle.
    var profiles: [UInt16: CharacteristicProfile] = [:]

    private var pumpsStarted = false
    private var pumps: [Task<Void, Never>] = []
    let subscriptionListeners = AsyncStreamFanOut<SubscriptionChange>()
    let connectionListeners = AsyncStreamFanOut<PeripheralConnectionEvent>()
    private var nextIdentifier: UInt64 = 0
    /// The centrals connected now, by connection handle.
    private var connectedCentrals: [UInt16: Central] = [:]

    /// A manager on an existing host; the host's GATT server becomes this manager's.
    public init(host: LEHost, logger: Logger = Logger(label: "bluejay.peripheral")) {
        self.init(backend: host, logger: logger)
    }

    /// A manager on a backend: an `LEHost`, or a `BlueZPeripheral` when bluetoothd keeps the
    /// adapter. What the backend cannot do is refused with the reason.
    public init(backend: any PeripheralBackend, logger: Logger = Logger(label: "bluejay.peripheral")) {
        self.backend = backend
        self.logger = logger
        router = RequestRouter(resolver: backend.addressResolver)
    }

    /// Our host, for what only it can do; over BlueZ, `unsupported` with the reason.
    func requireHost(_ feature: String) throws(PeripheralError) -> LEHost {
        guard let host else {
            throw .host(.unsupported("\(feature) over \(backend.backendName): BlueZ's D-Bus API offers no call for it"))
        }
        return host
    }

    /// A manager on a new host over `transport`.
    public init(transport: any HCITransport, configuration: HostConfiguration = HostConfiguration(),
                logger: Logger = Logger(label: "bluejay.peripheral")) {
        self.init(host: LEHost(transport: transport, configuration: configuration, logger: logger), logger: logger)
    }

    deinit {
        for pump in pumps { pump.cancel() }
    }

    // MARK: Power

    /// Starts the host and the controller, and names the GAP service after the host's
    /// configured device name.
    public func powerOn() async throws(PeripheralError) {
        do {
            try await backend.start()
        } catch {
            throw PeripheralError.wrap(error)
        }
        await backend.server.setDeviceName(backend.configuredDeviceName)
        await startPumps()
    }

    /// Stops advertising, disconnects every central and closes the transport.
    public func powerOff() async {
        try? await backend.stopAdvertising()
        await backend.shutdown()
        router.finishAll()
    }

    // MARK: Events

    /// Changes of centrals' subscriptions, as they happen.
    public func subscriptionChanges() async -> AsyncStream<SubscriptionChange> {
        await startPumps()
        return subscriptionListeners.makeStream()
    }

    /// Centrals connecting and disconnecting, and queues that drained.
    public func connectionEvents() async -> AsyncStream<PeripheralConnectionEvent> {
        await startPumps()
        return connectionListeners.makeStream()
    }

    func makeIdentifier() -> UInt64 {
        nextIdentifier += 1
        return nextIdentifier
    }

    /// Listens to the host's and the server's events, once. The streams are registered
    /// before this returns, so nothing that happens afterwards is missed.
    func startPumps() async {
        guard !pumpsStarted else { return }
        pumpsStarted = true
        router.attach(backend.server)
        let serverEvents = await backend.serverEvents()
        let linkEvents = await backend.peripheralLinkEvents()
        pumps.append(Task { [weak self] in
            for await event in serverEvents { await self?.handle(event) }
        })
        pumps.append(Task { [weak self] in
            for await event in linkEvents { await self?.handle(event) }
        })
    }

    private func handle(_ event: GATTServerEvent) {
        switch event {
        case let .subscriptionChanged(subscription):
            guard let characteristic = publishedCharacteristic(valueHandle: subscription.valueHandle) else { return }
            let change = SubscriptionChange(central: Central(connectionHandle: subscription.connectionHandle, overTheAir: subscription.peer,
                                                             resolver: backend.addressResolver),
                                            characteristic: characteristic, isNotifying: subscription.isNotifying,
                                            isIndicating: subscription.isIndicating, isRestored: subscription.isRestored,
                                            bondIdentity: subscription.bondIdentity)
            subscriptionListeners.yield(change)
        case let .readyToUpdateSubscribers(connectionHandle):
            let central = connectedCentrals[connectionHandle] ?? Central(connectionHandle: connectionHandle, address: nil)
            broadcast(.readyToUpdateSubscribers(central))
        case .mtuExchanged:
            break
        }
    }

    private func handle(_ event: PeripheralLinkEvent) {
        switch event {
        case let .connected(handle, address):
            let central = Central(connectionHandle: handle, address: address)
            connectedCentrals[handle] = central
            broadcast(.connected(central))
        case let .identityResolved(handle, identity):
            let central = Central(connectionHandle: handle, address: identity)
            connectedCentrals[handle] = central
            broadcast(.identityResolved(central))
        case let .bondReplaced(handle, address, replacement):
            broadcast(.bondReplaced(connectedCentrals[handle] ?? Central(connectionHandle: handle, address: address), replacement))
        case let .disconnected(handle, address, reason):
            let central = connectedCentrals.removeValue(forKey: handle) ?? Central(connectionHandle: handle, address: address)
            broadcast(.disconnected(central, reason: reason))
        case .closed:
            connectedCentrals.removeAll()
            connectionListeners.finish()
            subscriptionListeners.finish()
            router.finishAll()
        }
    }

    private func broadcast(_ event: PeripheralConnectionEvent) {
        connectionListeners.yield(event)
    }

    func publishedCharacteristic(valueHandle: UInt16) -> GATTPublishedCharacteristic? {
        for service in services {
            if let found = service.characteristics.first(where: { $0.valueHandle == valueHandle }) { return found }
        }
        return nil
    }
}
