import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import GATTProfiles
import Logging

/// The peripheral role, as BlueCap's PeripheralManager offers it, on a Bluejay `LEHost`:
/// publish services, advertise (a name and service UUIDs, any fields, or an iBeacon), keep
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
    public let host: LEHost
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
        self.host = host
        self.logger = logger
        router = RequestRouter(resolver: host.addressResolver)
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
            try await host.powerOn()
        } catch {
            throw PeripheralError.wrap(error)
        }
        await host.server.setDeviceName(host.configuration.deviceName)
        await startPumps()
    }

    /// Stops advertising, disconnects every central and closes the transport.
    public func powerOff() async {
        try? await host.stopAdvertising()
        await host.shutdown()
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
        router.attach(await host.server)
        let serverEvents = await host.server.events()
        let hostEvents = await host.events()
        pumps.append(Task { [weak self] in
            for await event in serverEvents { await self?.handle(event) }
        })
        pumps.append(Task { [weak self] in
            for await event in hostEvents { await self?.handle(event) }
        })
    }

    private func handle(_ event: GATTServerEvent) {
        switch event {
        case let .subscriptionChanged(subscription):
            guard let characteristic = publishedCharacteristic(valueHandle: subscription.valueHandle) else { return }
            let change = SubscriptionChange(central: Central(connectionHandle: subscription.connectionHandle, overTheAir: subscription.peer,
                                                             resolver: host.addressResolver),
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

    private func handle(_ event: HostEvent) {
        switch event {
        case let .connected(connection) where connection.role == .peripheral:
            let central = Central(connectionHandle: connection.handle, address: connection.identity ?? connection.peer)
            connectedCentrals[connection.handle] = central
            broadcast(.connected(central))
        case let .identityResolved(connection, identity) where connection.role == .peripheral:
            let central = Central(connectionHandle: connection.handle, address: identity)
            connectedCentrals[connection.handle] = central
            broadcast(.identityResolved(central))
        case let .bondReplaced(connection, replacement) where connection.role == .peripheral:
            let central = connectedCentrals[connection.handle]
                ?? Central(connectionHandle: connection.handle, address: connection.identity ?? connection.peer)
            broadcast(.bondReplaced(central, replacement))
        case let .disconnected(connection, reason) where connection.role == .peripheral:
            let central = connectedCentrals.removeValue(forKey: connection.handle)
                ?? Central(connectionHandle: connection.handle, address: connection.identity ?? connection.peer)
            broadcast(.disconnected(central, reason: reason))
        case .transportClosed:
            connectedCentrals.removeAll()
            connectionListeners.finish()
            subscriptionListeners.finish()
            router.finishAll()
        default:
            break
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
