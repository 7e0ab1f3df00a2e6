import BluetoothCore
import BluetoothHCI
import BluetoothHost
import DBus
import Logging
import Synchronization

/// The central role on BlueZ: bluetoothd keeps the adapter, and this backend drives it over
/// D-Bus (`org.bluez.Adapter1`, `Device1`, `GattCharacteristic1`, …) on the system bus. Select
/// it with the transport string `bluez` (the default adapter) or `bluez:hciN`.
///
/// One system-bus connection, one `GetManagedObjects` at start, then BlueZ's signals
/// (InterfacesAdded/Removed and PropertiesChanged under `/org/bluez`) keep a copy of its
/// objects (``BlueZObjectTree``) from which scans, connections and discovery read. When
/// bluetoothd leaves the bus (`NameOwnerChanged`), every link ends, the scan fails and
/// ``backendEvents()`` says so; when it comes back the objects are read again, the agent
/// registered again, and ``backendEvents()`` says it is usable.
public final class BlueZCentral: CentralBackend, @unchecked Sendable {
    // @unchecked: every mutable field is behind `state` (a Mutex); the rest is let.
    public let backendName = "bluez"
    public let clock: BluetoothClock
    /// The adapter asked for (`hci0`), `nil` for BlueZ's first.
    public let adapterName: String?
    /// What this device can show and enter in pairing (the agent's capability).
    public let ioCapability: SMPIOCapability
    let logger: Logger
    let availabilityListeners = AsyncStreamFanOut<BackendEvent>()
    let state = Mutex(State())

    struct ScanRegistration: Sendable {
        var id: UInt64
        var options: ScanOptions
        var handler: @Sendable ([Advertisement]) -> Void
        var onEnd: @Sendable (HostError?) -> Void
    }

    /// A connection waiting for BlueZ to hear a device. It is registered before discovery
    /// starts, so that a device heard at once is not missed: `heard` keeps it until the
    /// waiter waits.
    struct DeviceWaiter: Sendable {
        var address: BluetoothAddress
        var heard: DBusObjectPath?
        var continuation: CheckedContinuation<DBusObjectPath, Never>?
    }

    struct State: Sendable {
        /// Tells the waiters for `address` that BlueZ heard it at `path`: those waiting get it
        /// (returned, to resume outside the lock), the others keep it.
        mutating func deviceHeard(_ address: BluetoothAddress, at path: DBusObjectPath) -> [CheckedContinuation<DBusObjectPath, Never>] {
            var ready: [CheckedContinuation<DBusObjectPath, Never>] = []
            for (id, waiter) in deviceWaiters where waiter.address == address {
                if let continuation = waiter.continuation {
                    ready.append(continuation)
                    deviceWaiters[id] = nil
                } else {
                    deviceWaiters[id]?.heard = path
                }
            }
            return ready
        }

        var bus: DBusConnection?
        var adapter: DBusObjectPath?
        var tree = BlueZObjectTree()
        var isDaemonPresent = false
        var scan: ScanRegistration?
        /// Discovery sessions this backend holds open (a scan, connections looking for a device).
        var discoveryUsers = 0
        var connections: [DBusObjectPath: BlueZConnection] = [:]
        /// Who waits for a device to be heard (connecting to one BlueZ has not heard yet).
        var deviceWaiters: [UInt64: DeviceWaiter] = [:]
        var watchers: [Task<Void, Never>] = []
        var agent: (any PairingAgent)?
        var agentExport: BlueZAgent?
        /// Peers this process paired with through a passkey or a comparison (MITM protection).
        var authenticatedPeers: Set<BluetoothAddress> = []
        var nextID: UInt64 = 0
        var isShutDown = false
        /// bluetoothd came back without the adapter: load when an adapter appears.
        var awaitsAdapter = false
        /// The objects removed while each `GetManagedObjects` of ``loadGATTObjects(of:)`` was
        /// under way: its answer may predate their removal, and must not bring them back.
        var removedDuringReads: [UInt64: Set<DBusObjectPath>] = [:]
    }

    /// A backend on `adapter` (`hci0`; `nil`: BlueZ's default, its first adapter).
    public init(adapter: String? = nil, ioCapability: SMPIOCapability = .keyboardDisplay, clock: BluetoothClock = .continuous,
                logger: Logger = Logger(label: "bluejay.bluez")) {
        adapterName = adapter
        self.ioCapability = ioCapability
        self.clock = clock
        self.logger = logger
    }

    /// How long a call to bluetoothd may take before it is given up (its own operations, such
    /// as connecting or pairing, have their own limits).
    static let callTimeout: Duration = .seconds(25)

    // MARK: Start and stop

    public func start() async throws {
        if state.withLock({ $0.bus != nil && $0.adapter != nil }) { return }
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.system()
        } catch {
            throw BlueZError.busUnavailable("\(error)")
        }
        do {
            try await watchSignals(on: bus)
            state.withLock { $0.bus = bus }
            try await loadObjects()
        } catch {
            bus.close()
            state.withLock { state in
                state.bus = nil
                state.watchers.forEach { $0.cancel() }
                state.watchers = []
            }
            throw error
        }
    }

    /// Reads BlueZ's objects, picks the adapter and powers it on.
    private func loadObjects() async throws {
        let bus = try requireBus()
        let objects: [DBusObjectPath: [String: [String: DBusValue]]]
        do {
            objects = try await bus.managedObjects(of: BlueZ.service)
        } catch {
            throw BlueZError.from(error, operation: "reading BlueZ's objects (GetManagedObjects)")
        }
        let tree = BlueZObjectTree(objects)
        guard let adapter = tree.adapter(named: adapterName) else {
            let known = tree.adapters.compactMap { $0.path.elements.last.map(String.init) }
            throw BlueZError.adapterNotFound((adapterName ?? "at all") + (known.isEmpty ? "" : " (it has \(known.joined(separator: ", ")))"))
        }
        state.withLock { state in
            state.tree = tree
            state.adapter = adapter
            state.isDaemonPresent = true
        }
        if tree.properties(adapter, BlueZ.adapter)?["Powered"]?.boolValue != true {
            try await powerOn(adapter)
        }
        if let agent = state.withLock({ $0.agent }) { try? await registerAgent(agent) }
        logger.info("BlueZ adapter \(adapter) ready")
    }

    /// Powers the adapter on. bluetoothd powers adapters itself as it starts (AutoEnable), and
    /// another client may be at it too: then BlueZ answers Busy, and the adapter is waited for
    /// (at most 10 s), asking again.
    private func powerOn(_ adapter: DBusObjectPath) async throws {
        logger.info("powering \(adapter) on")
        let deadline = clock.now + .seconds(10)
        while true {
            do {
                try await setProperty("Powered", to: .boolean(true), interface: BlueZ.adapter, at: adapter, operation: "powering the adapter on")
                return
            } catch let error as BlueZError where error.isBusy {
                let bus = try requireBus()
                if (try? await bus.property("Powered", interface: BlueZ.adapter, of: BlueZ.service, at: adapter))?.unwrapped.boolValue == true {
                    return
                }
                guard clock.now < deadline else { throw error }
                logger.info("\(adapter) is being powered by another client; asking again")
                try await clock.sleep(until: clock.now + .milliseconds(200))
            }
        }
    }

    public func shutdown() async {
        let (bus, adapter, connections, scan, watchers, stopsDiscovery, agent) = state.withLock { state in
            state.isShutDown = true
            defer {
                state.connections = [:]
                state.scan = nil
                state.watchers = []
                state.bus = nil
                state.agentExport = nil
            }
            return (state.bus, state.adapter, Array(state.connections.values), state.scan, state.watchers, state.discoveryUsers > 0,
                    state.agentExport)
        }
        for connection in connections where connection.isConnected { try? await connection.disconnect(reason: .remoteUserTerminatedConnection) }
        for connection in connections { connection.linkDidEnd(reason: .connectionTerminatedByLocalHost) }
        scan?.onEnd(nil)
        if stopsDiscovery, let adapter, let bus {
            _ = try? await bus.call(destination: BlueZ.service, path: adapter, interface: BlueZ.adapter, member: "StopDiscovery", timeout: .seconds(2))
        }
        if let agent { await agent.unregister() }
        watchers.forEach { $0.cancel() }
        bus?.close()
        availabilityListeners.finish()
    }

    public func backendEvents() async -> AsyncStream<BackendEvent> {
        availabilityListeners.makeStream()
    }

    // MARK: Signals

    private func watchSignals(on bus: DBusConnection) async throws {
        do {
            // One stream for every signal of BlueZ's, so that they apply in the order sent: a
            // device's ServicesResolved must come after its GATT objects' InterfacesAdded.
            let signals = try await bus.signals(matching: DBusMatchRule(sender: BlueZ.service))
            let owners = try await bus.nameOwnerChanges(BlueZ.service)
            let tasks = [
                Task { [weak self] in
                    do { for try await signal in signals { self?.handle(signal) } } catch {}
                },
                Task { [weak self] in
                    do { for try await change in owners { await self?.daemonOwnerChanged(newOwner: change.newOwner) } } catch {}
                },
            ]
            state.withLock { $0.watchers += tasks }
        } catch {
            throw BlueZError.from(error, operation: "watching BlueZ's signals (AddMatch)")
        }
    }

    /// One signal of BlueZ's: the object manager's, a property change, or a device's `Disconnected`.
    func handle(_ message: DBusMessage) {
        guard let path = message.path else { return }
        switch (message.interface, message.member) {
        case (DBusConnection.objectManagerInterface, "InterfacesAdded"):
            guard let (object, interfaces) = try? message.decode(DBusObjectPath.self, [String: [String: DBusValue]].self) else { return }
            interfacesAdded(object, interfaces)
        case (DBusConnection.objectManagerInterface, "InterfacesRemoved"):
            guard let (object, interfaces) = try? message.decode(DBusObjectPath.self, [String].self) else { return }
            interfacesRemoved(object, interfaces)
        case (DBusConnection.propertiesInterface, "PropertiesChanged"):
            guard let (interface, changed, invalidated) = try? message.decode(String.self, [String: DBusValue].self, [String].self) else { return }
            propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        case (BlueZ.device, "Disconnected"):
            // BlueZ 5.67 and later say why a link ended; 5.66 does not send it.
            if let reason = message.body.first?.stringValue, let connection = state.withLock({ $0.connections[path] }) {
                connection.disconnectedSignal(reason: reason)
            }
        default:
            return
        }
    }

    private func interfacesAdded(_ path: DBusObjectPath, _ interfaces: [String: [String: DBusValue]]) {
        if interfaces[BlueZ.adapter] != nil, state.withLock({ state in
            defer { state.awaitsAdapter = false }
            return state.awaitsAdapter
        }) {
            Task { await self.daemonCameBack() }
        }
        let (device, scan, waiters, connection) = state.withLock { state -> ([String: DBusValue]?, ScanRegistration?, [CheckedContinuation<DBusObjectPath, Never>], BlueZConnection?) in
            state.tree.add(path, interfaces: interfaces)
            let connection = state.connections.first { path.isWithin($0.key) }?.value
            guard let device = state.tree.properties(path, BlueZ.device), interfaces[BlueZ.device] != nil, path.parent == state.adapter else {
                return (nil, nil, [], connection)
            }
            var waiters: [CheckedContinuation<DBusObjectPath, Never>] = []
            if let address = BlueZObjectTree.address(of: device) { waiters = state.deviceHeard(address.address, at: path) }
            return (device, state.scan, waiters, connection)
        }
        waiters.forEach { $0.resume(returning: path) }
        if let device, let scan { report(device, to: scan) }
        if let connection, path != connection.path { connection.gattObjectsChanged(added: path, isService: interfaces[BlueZ.gattService] != nil) }
    }

    private func interfacesRemoved(_ path: DBusObjectPath, _ interfaces: [String]) {
        let connection = state.withLock { state -> BlueZConnection? in
            let connection = state.connections.first { path.isWithin($0.key) }?.value
            if let connection, interfaces.contains(BlueZ.gattService) { connection.gattServiceWillBeRemoved(path, tree: state.tree) }
            if interfaces.contains(BlueZ.device), let address = state.tree.properties(path, BlueZ.device).flatMap(BlueZObjectTree.address(of:)) {
                state.authenticatedPeers.remove(address.address)
            }
            state.tree.remove(path, interfaces: interfaces)
            for read in state.removedDuringReads.keys { state.removedDuringReads[read]?.insert(path) }
            return connection
        }
        if let connection, interfaces.contains(BlueZ.device) { connection.linkDidEnd(reason: nil) }
    }

    private func propertiesChanged(_ path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]) {
        let (device, scan, connection, waiters) = state.withLock { state
            -> ([String: DBusValue]?, ScanRegistration?, BlueZConnection?, [CheckedContinuation<DBusObjectPath, Never>]) in
            state.tree.change(path, interface: interface, changed: changed, invalidated: invalidated)
            // A bond BlueZ no longer has (removed with bluetoothctl, or by bluetoothd after a
            // failed re-encryption) was not authenticated by our agent any more.
            if interface == BlueZ.device, changed["Paired"]?.unwrapped.boolValue == false,
               let address = state.tree.properties(path, BlueZ.device).flatMap(BlueZObjectTree.address(of:)) {
                state.authenticatedPeers.remove(address.address)
            }
            let connection = state.connections.first { path.isWithin($0.key) }?.value
            guard interface == BlueZ.device, path.parent == state.adapter,
                  !BlueZAdvertisement.advertisedProperties.isDisjoint(with: changed.keys) else { return (nil, nil, connection, []) }
            let device = state.tree.properties(path, BlueZ.device)
            // A device heard again (its RSSI): whoever waits to connect to it may go on.
            var waiters: [CheckedContinuation<DBusObjectPath, Never>] = []
            if changed["RSSI"] != nil, let address = device.flatMap(BlueZObjectTree.address(of:)) {
                waiters = state.deviceHeard(address.address, at: path)
            }
            return (device, state.scan, connection, waiters)
        }
        waiters.forEach { $0.resume(returning: path) }
        if let device, let scan { report(device, to: scan) }
        connection?.propertiesChanged(path, interface: interface, changed: changed)
    }

    private func report(_ device: [String: DBusValue], to scan: ScanRegistration) {
        guard let advertisement = BlueZAdvertisement.advertisement(from: device) else { return }
        // BlueZ also signals devices it knew before the filter was set; the filter holds here.
        let wanted = scan.options.serviceUUIDs
        if !wanted.isEmpty, wanted.allSatisfy({ !advertisement.serviceUUIDs.contains($0) }) { return }
        if let minimum = scan.options.minimumRSSI, let rssi = advertisement.rssi, rssi < minimum { return }
        scan.handler([advertisement])
    }

    /// bluetoothd left the bus (`newOwner` empty) or came back.
    private func daemonOwnerChanged(newOwner: String) async {
        if newOwner.isEmpty {
            let (connections, scan, waiters) = state.withLock { state in
                state.isDaemonPresent = false
                state.adapter = nil
                state.tree = BlueZObjectTree()
                state.discoveryUsers = 0
                defer {
                    state.connections = [:]
                    state.scan = nil
                    state.deviceWaiters = [:]
                }
                return (Array(state.connections.values), state.scan, Array(state.deviceWaiters.values))
            }
            logger.error("bluetoothd left the system bus: every link ended")
            for connection in connections { connection.linkDidEnd(reason: .connectionTerminatedByLocalHost) }
            scan?.onEnd(.transportClosed(nil))
            // Nobody will appear: the waiters' attempts fail on the missing adapter.
            waiters.forEach { $0.continuation?.resume(returning: .root) }
            availabilityListeners.yield(.unavailable(BlueZError.daemonUnavailable("bluetoothd left the system bus").description))
        } else {
            logger.notice("bluetoothd is on the system bus again (\(newOwner))")
            await daemonCameBack()
        }
    }

    /// Loads BlueZ's objects again and says the backend is available. bluetoothd takes its
    /// name on the bus before it has registered its adapters: without ours yet, it is loaded
    /// when its `Adapter1` appears (``interfacesAdded(_:_:)``).
    private func daemonCameBack() async {
        do {
            try await loadObjects()
            state.withLock { $0.awaitsAdapter = false }
            availabilityListeners.yield(.available)
        } catch BlueZError.adapterNotFound(let which) {
            state.withLock { $0.awaitsAdapter = true }
            logger.notice("bluetoothd is back without adapter \(which) yet; waiting for it to appear")
        } catch {
            logger.error("bluetoothd came back but cannot be used: \(error)")
        }
    }

    // MARK: Calls

    func requireBus() throws -> DBusConnection {
        try state.withLock { state throws -> DBusConnection in
            guard let bus = state.bus, !state.isShutDown else { throw HostError.notPoweredOn }
            return bus
        }
    }

    func requireAdapter() throws -> (DBusConnection, DBusObjectPath) {
        try state.withLock { state throws -> (DBusConnection, DBusObjectPath) in
            guard let bus = state.bus, !state.isShutDown else { throw HostError.notPoweredOn }
            guard state.isDaemonPresent, let adapter = state.adapter else {
                throw BlueZError.daemonUnavailable("bluetoothd is not on the system bus now")
            }
            return (bus, adapter)
        }
    }

    /// Calls BlueZ; failures become ``BlueZError``s or, where they mean the same, ``HostError``s.
    @discardableResult
    func call(_ path: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue] = [],
              timeout: Duration? = nil, operation: String) async throws -> [DBusValue] {
        let bus = try requireBus()
        do {
            return try await bus.call(destination: BlueZ.service, path: path, interface: interface, member: member,
                                      arguments: arguments, timeout: timeout ?? Self.callTimeout)
        } catch {
            throw BlueZError.from(error, operation: operation)
        }
    }

    func setProperty(_ name: String, to value: DBusValue, interface: String, at path: DBusObjectPath, operation: String) async throws {
        let bus = try requireBus()
        do {
            try await bus.setProperty(name, to: value, interface: interface, of: BlueZ.service, at: path)
        } catch {
            throw BlueZError.from(error, operation: operation)
        }
    }

    func tree() -> BlueZObjectTree { state.withLock { $0.tree } }

    /// Reads BlueZ's objects (`GetManagedObjects`) and adds to the tree the GATT objects below
    /// `device` that it lacks: those whose `InterfacesAdded` has not come yet. What the tree
    /// has came from signals, as new as this answer or newer, and stays; an object removed
    /// while the call was under way is not brought back; nothing is added once the task is
    /// cancelled or the device is no longer connected (bluetoothd gone: the tree is empty).
    func loadGATTObjects(of device: DBusObjectPath) async {
        guard let bus = state.withLock({ $0.bus }) else { return }
        let read = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.removedDuringReads[state.nextID] = []
            return state.nextID
        }
        var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        do {
            objects = try await bus.managedObjects(of: BlueZ.service)
        } catch {
            logger.notice("reading \(device)'s GATT objects (GetManagedObjects): \(error); using those signalled")
        }
        let added = state.withLock { state -> Int in
            let removed = state.removedDuringReads.removeValue(forKey: read) ?? []
            guard !Task.isCancelled, state.tree.properties(device, BlueZ.device)?["Connected"]?.boolValue == true else { return 0 }
            var added = 0
            for (path, interfaces) in objects where path != device && path.isWithin(device) && !removed.contains(path) {
                let interfaces = state.tree.addMissing(path, interfaces: interfaces)
                if interfaces.contains(where: BlueZ.gattInterfaces.contains) { added += 1 }
            }
            return added
        }
        if added > 0 { logger.info("\(device): \(added) GATT objects read before BlueZ signalled them (ServicesResolved came first)") }
    }

    // MARK: Scanning

    public func startScanning(_ options: ScanOptions, handler: @escaping @Sendable ([Advertisement]) -> Void,
                          onEnd: @escaping @Sendable (HostError?) -> Void) async throws {
        let (_, adapter) = try requireAdapter()
        let id = try state.withLock { state throws -> UInt64 in
            guard state.scan == nil else { throw HostError.scanInProgress }
            state.nextID += 1
            state.scan = ScanRegistration(id: state.nextID, options: options, handler: handler, onEnd: onEnd)
            return state.nextID
        }
        do {
            try await call(adapter, BlueZ.adapter, "SetDiscoveryFilter", [Self.discoveryFilter(options)], operation: "setting the discovery filter")
            try await beginDiscovery(adapter)
        } catch {
            state.withLock { if $0.scan?.id == id { $0.scan = nil } }
            throw error
        }
    }

    /// `SetDiscoveryFilter`'s argument for `options` (doc/adapter-api.txt): LE only, BlueZ's
    /// duplicate filter off when every report is wanted, the service UUIDs and RSSI threshold.
    static func discoveryFilter(_ options: ScanOptions) -> DBusValue {
        var filter: [String: DBusValue] = [
            "Transport": .string("le"),
            "DuplicateData": .boolean(!options.filterDuplicates),
        ]
        if !options.serviceUUIDs.isEmpty {
            filter["UUIDs"] = .array(of: .string, options.serviceUUIDs.map { .string($0.uuidString.lowercased()) })
        }
        if let minimum = options.minimumRSSI { filter["RSSI"] = .int16(Int16(minimum)) }
        // Passive scanning has no BlueZ filter before 5.69's Discoverable/Pattern; BlueZ scans actively.
        return DBusValue(filter)
    }

    public func stopScanning() async {
        guard let scan = state.withLock({ state -> ScanRegistration? in
            defer { state.scan = nil }
            return state.scan
        }) else { return }
        if let adapter = state.withLock({ $0.adapter }) { await endDiscovery(adapter) }
        scan.onEnd(nil)
    }

    /// StartDiscovery, unless this backend already holds a discovery session open.
    func beginDiscovery(_ adapter: DBusObjectPath) async throws {
        let first = state.withLock { state -> Bool in
            state.discoveryUsers += 1
            return state.discoveryUsers == 1
        }
        guard first else { return }
        do {
            try await call(adapter, BlueZ.adapter, "StartDiscovery", operation: "starting discovery")
        } catch {
            state.withLock { $0.discoveryUsers = max(0, $0.discoveryUsers - 1) }
            throw error
        }
    }

    func endDiscovery(_ adapter: DBusObjectPath) async {
        let last = state.withLock { state -> Bool in
            guard state.discoveryUsers > 0 else { return false }
            state.discoveryUsers -= 1
            return state.discoveryUsers == 0
        }
        guard last else { return }
        do {
            try await call(adapter, BlueZ.adapter, "StopDiscovery", operation: "stopping discovery")
        } catch {
            logger.debug("StopDiscovery: \(error)")
        }
    }

    // MARK: Connecting

    public func openConnection(to peer: DeviceAddress, timeout: Duration?) async throws -> any CentralConnection {
        let (_, adapter) = try requireAdapter()
        let deadline = timeout.map { clock.now + $0 }
        // A device BlueZ is connected to already (bluetoothd reconnects bonded devices on its
        // own) is used as it is: it does not advertise, so discovery would not hear it.
        let linked = state.withLock { state -> DBusObjectPath? in
            guard let path = state.tree.device(peer.address, on: adapter),
                  state.tree.properties(path, BlueZ.device)?["Connected"]?.boolValue == true else { return nil }
            return path
        }
        // Else: BlueZ connects to an LE device by scanning for it first, and gives up after a
        // few seconds (le-connection-abort-by-local) if it does not hear it: so discover until
        // the device is heard now, and connect while still discovering.
        let path: DBusObjectPath
        if let linked {
            logger.info("\(peer) is connected to BlueZ already")
            path = linked
        } else {
            path = try await findDevice(peer, on: adapter, deadline: deadline)
        }
        defer { if linked == nil { Task { await self.endDiscovery(adapter) } } }
        let connection = state.withLock { state -> BlueZConnection in
            if let existing = state.connections[path], existing.isConnected { return existing }
            let connection = BlueZConnection(central: self, path: path, peer: peer)
            state.connections[path] = connection
            return connection
        }
        do {
            let connected = try await BlueZDeadline.run(until: deadline, clock: clock) { [self] in
                try await call(path, BlueZ.device, "Connect", timeout: timeout.map { $0 + .seconds(5) } ?? .seconds(3600),
                               operation: "connecting to \(peer)")
            }
            guard connected != nil else {
                logger.info("connecting to \(peer) timed out; cancelling")
                _ = try? await call(path, BlueZ.device, "Disconnect", operation: "cancelling the connection to \(peer)")
                forget(connection)
                throw HostError.connectionTimeout(peer)
            }
        } catch let error as HostError {
            if case .cancelled = error {
                _ = try? await call(path, BlueZ.device, "Disconnect", operation: "cancelling the connection to \(peer)")
            }
            forget(connection)
            throw error
        } catch is CancellationError {
            _ = try? await call(path, BlueZ.device, "Disconnect", operation: "cancelling the connection to \(peer)")
            forget(connection)
            throw HostError.cancelled
        } catch let error as BlueZError where error.isAlreadyConnected {
            logger.info("\(peer) was connected already")
        } catch let error as BlueZError {
            forget(connection)
            logger.notice("connecting to \(peer): \(error)")
            if case let .refused(_, name, message) = error, name.hasSuffix(".Failed") || name.hasSuffix(".AbortedByLocal") || name.hasSuffix(".ConnectionAttemptFailed") {
                throw HostError.connectionFailed(peer, BlueZDisconnection.status(forConnectFailure: message))
            }
            throw error
        }
        connection.didConnect()
        return connection
    }

    private func forget(_ connection: BlueZConnection) {
        state.withLock { state in
            if state.connections[connection.path] === connection { state.connections[connection.path] = nil }
        }
    }

    /// Discovers until BlueZ hears `peer` (a new device, or a known one's RSSI); the discovery
    /// session stays open for the caller to end.
    private func findDevice(_ peer: DeviceAddress, on adapter: DBusObjectPath, deadline: BluetoothClock.Instant?) async throws -> DBusObjectPath {
        logger.info("discovering \(peer) before connecting")
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        // Waiting before discovery starts: BlueZ may report the device as soon as it starts.
        state.withLock { $0.deviceWaiters[id] = DeviceWaiter(address: peer.address) }
        do {
            try await beginDiscovery(adapter)
        } catch {
            state.withLock { _ = $0.deviceWaiters.removeValue(forKey: id) }
            throw error
        }
        let found = try await BlueZDeadline.run(until: deadline, clock: clock) { [self] in
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<DBusObjectPath, Never>) in
                    let heard = state.withLock { state -> DBusObjectPath? in
                        guard let waiter = state.deviceWaiters[id] else { return .root }
                        if let heard = waiter.heard {
                            state.deviceWaiters[id] = nil
                            return heard
                        }
                        state.deviceWaiters[id]?.continuation = continuation
                        return nil
                    }
                    if let heard { continuation.resume(returning: heard) }
                }
            } onCancel: {
                state.withLock { $0.deviceWaiters.removeValue(forKey: id) }?.continuation?.resume(returning: .root)
            }
        }
        state.withLock { $0.deviceWaiters.removeValue(forKey: id) }?.continuation?.resume(returning: .root)
        do {
            try Task.checkCancellation()
        } catch {
            await endDiscovery(adapter)
            throw HostError.cancelled
        }
        guard let found, found != .root else {
            await endDiscovery(adapter)
            throw HostError.connectionTimeout(peer)
        }
        return found
    }

    func connectionDidEnd(_ connection: BlueZConnection) {
        forget(connection)
    }

    // MARK: Bonds and the agent

    public func setPairingAgent(_ agent: any PairingAgent) async {
        state.withLock { $0.agent = agent }
        guard state.withLock({ $0.isDaemonPresent }) else { return }
        do {
            try await registerAgent(agent)
        } catch {
            logger.error("the pairing agent could not be registered with BlueZ: \(error)")
        }
    }

    public func bonds() async -> [Bond] {
        let (tree, adapter) = state.withLock { ($0.tree, $0.adapter) }
        guard let adapter else { return [] }
        let local = tree.properties(adapter, BlueZ.adapter).flatMap { properties -> DeviceAddress? in
            guard let text = properties["Address"]?.stringValue, let address = BluetoothAddress(text) else { return nil }
            return DeviceAddress(address, type: properties["AddressType"]?.stringValue == "random" ? .random : .public)
        } ?? DeviceAddress(.zero, type: .public)
        return tree.objects.compactMap { path, interfaces -> Bond? in
            guard path.parent == adapter, let device = interfaces[BlueZ.device],
                  device["Bonded"]?.boolValue ?? device["Paired"]?.boolValue ?? false,
                  let peer = BlueZObjectTree.address(of: device) else { return nil }
            // BlueZ keeps the keys (in /var/lib/bluetooth); a bond here says only who.
            return Bond(localIdentity: local, peerIdentity: peer)
        }.sorted { $0.peerIdentity.address < $1.peerIdentity.address }
    }

    public func removeBond(with peer: DeviceAddress) async throws -> Bool {
        let (_, adapter) = try requireAdapter()
        guard let path = state.withLock({ $0.tree.device(peer.address, on: adapter) }) else { return false }
        let wasBonded = state.withLock { state -> Bool in
            let device = state.tree.properties(path, BlueZ.device)
            return device?["Bonded"]?.boolValue ?? device?["Paired"]?.boolValue ?? false
        }
        try await call(adapter, BlueZ.adapter, "RemoveDevice", [.objectPath(path)], operation: "removing the bond with \(peer)")
        // A later pairing with that address earns its own authentication, or none.
        _ = state.withLock { $0.authenticatedPeers.remove(peer.address) }
        return wasBonded
    }

    /// BlueZ caches the databases of bonded devices itself (`/var/lib/bluetooth/*/cache`); it
    /// has no per-device trust for caching, so this does nothing.
    public func setDatabaseTrusted(_ trusted: Bool, for peer: DeviceAddress) {
        logger.debug("setDatabaseTrusted has no effect over BlueZ: bluetoothd decides what it caches")
    }

    public func removeCachedDatabase(for peer: DeviceAddress) async {
        logger.debug("removeCachedDatabase has no effect over BlueZ: removing the bond removes bluetoothd's cache")
    }

    /// Whether this process saw a pairing with `peer` that had MITM protection.
    func pairedWithAuthentication(_ peer: BluetoothAddress) -> Bool {
        state.withLock { $0.authenticatedPeers.contains(peer) }
    }

    /// The adapter's path, once started.
    var adapterPath: DBusObjectPath? { state.withLock { $0.adapter } }
}
