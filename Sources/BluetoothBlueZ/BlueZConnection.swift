import BluetoothCore
import BluetoothHCI
import BluetoothHost
import DBus
import Synchronization

/// A link to a peripheral through BlueZ (`org.bluez.Device1` and the GATT objects below it).
///
/// BlueZ discovers the whole database itself once connected (`ServicesResolved`), handles
/// Service Changed, raises security for a bonded peer and caches bonded peers' databases; this
/// connection maps its objects onto our GATT value types (``BlueZGATTDatabase``) and its calls
/// onto the procedures. What BlueZ's API does not give (PHY, data length and parameter
/// control, signed writes, L2CAP channels through this API, RSSI of a connected device) throws
/// ``BluetoothHost/HostError/unsupported(_:)`` saying so.
final class BlueZConnection: CentralConnection, @unchecked Sendable {
    // @unchecked: the mutable state is behind `state` (a Mutex); `central` is weak and only read.
    weak var central: BlueZCentral?
    let path: DBusObjectPath
    let peer: DeviceAddress
    private let state = Mutex(State())

    struct Subscription: Sendable {
        var id: UInt64
        var valueHandle: UInt16
        var isIndication: Bool
        var handler: @Sendable ([GATTValue]) -> Void
        var ended: @Sendable (HostError?) -> Void
        var socket: BlueZNotifySocket?
    }

    struct State: Sendable {
        var isConnected = false
        var disconnectReason: HCIStatus?
        var disconnectWaiters: [UInt64: CheckedContinuation<HCIStatus, any Error>] = [:]
        var resolveWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        /// Waiting for `Paired` to turn true (see ``pair(authenticated:)``).
        var pairedWaiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var database: BlueZGATTDatabase?
        var mtu: UInt16 = 23
        /// Subscriptions by the characteristic's object path.
        var subscriptions: [DBusObjectPath: Subscription] = [:]
        var writeSockets: [DBusObjectPath: BlueZWriteSocket] = [:]
        var serviceChangeListeners: [UInt64: AsyncStream<GATTServiceChange>.Continuation] = [:]
        var nextID: UInt64 = 0
        /// Why BlueZ said the link ended (`Disconnected` signal, BlueZ 5.67 and later).
        var reportedReason: HCIStatus?
        /// Services BlueZ added after discovery, whose change is published once their objects
        /// have all arrived; and whether the database held each already.
        var addedServices: [DBusObjectPath: Bool] = [:]
        var addedServicesFlush: Task<Void, Never>?
        /// Reading BlueZ's GATT objects once it said ServicesResolved (see ``resolveDatabase()``),
        /// and whether it said so again meanwhile (then the objects are read once more).
        var resolving: Task<Void, Never>?
        var resolvesAgain = false
    }

    init(central: BlueZCentral, path: DBusObjectPath, peer: DeviceAddress) {
        self.central = central
        self.path = path
        self.peer = peer
    }

    var description: String { "BlueZ link to \(peer) (\(path))" }

    // MARK: State

    var identity: DeviceAddress? { nil }
    var peerIdentity: DeviceAddress { peer }
    var isConnected: Bool { state.withLock { $0.isConnected } }
    var disconnectReason: HCIStatus? { state.withLock { $0.disconnectReason } }
    var attMTU: UInt16 { state.withLock { $0.mtu } }
    /// Whether BlueZ's GATT objects are being read for the database (``resolveDatabase()``).
    var isResolving: Bool { state.withLock { $0.resolving != nil } }
    /// How many tasks wait on this link: for its end, its services, a pairing.
    var waiterCount: Int { state.withLock { $0.disconnectWaiters.count + $0.resolveWaiters.count + $0.pairedWaiters.count } }

    /// What BlueZ says: a paired (bonded) device's link is encrypted, since bluetoothd raises a
    /// bonded LE link to medium security when it attaches ATT. BlueZ does not say whether the key
    /// was authenticated, nor its size: authenticated only when this process's agent took part
    /// in the pairing (a passkey or a comparison); the key size is unknown (0).
    var security: LinkSecurity {
        guard isConnected, let central, let device = central.tree().properties(path, BlueZ.device) else { return .unencrypted }
        let paired = device["Paired"]?.boolValue ?? false
        let bonded = device["Bonded"]?.boolValue ?? paired
        return LinkSecurity(isEncrypted: paired, isAuthenticated: paired && central.pairedWithAuthentication(peer.address),
                            keySize: 0, isBonded: bonded, bondIdentity: bonded ? peer : nil)
    }

    /// BlueZ does not report the PHY: the LE 1M default (what it is unless someone changed it).
    var phy: ConnectionPHY { .le1M }
    /// BlueZ does not report the data length: the initial one.
    var dataLength: DataLength { .initial }
    /// BlueZ does not report the connection parameters: all zero (no real link has them).
    var parameters: ConnectionParameters { ConnectionParameters(interval: 0, peripheralLatency: 0, supervisionTimeout: 0) }

    func didConnect() {
        state.withLock { state in
            state.isConnected = true
            state.disconnectReason = nil
        }
        resolveDatabase()
    }

    // MARK: Signals (from the central)

    func propertiesChanged(_ object: DBusObjectPath, interface: String, changed: [String: DBusValue]) {
        if object == path, interface == BlueZ.device {
            if changed["ServicesResolved"]?.unwrapped.boolValue == true { resolveDatabase(afresh: true) }
            if changed["Paired"]?.unwrapped.boolValue == true {
                let waiters = state.withLock { state in
                    defer { state.pairedWaiters = [:] }
                    return Array(state.pairedWaiters.values)
                }
                waiters.forEach { $0.resume() }
            }
            if changed["Connected"]?.unwrapped.boolValue == false { linkDidEnd(reason: nil) }
            return
        }
        guard interface == BlueZ.gattCharacteristic else { return }
        if let mtu = changed["MTU"]?.unwrapped.uint16Value { state.withLock { $0.mtu = max($0.mtu, mtu) } }
        guard let value = changed["Value"]?.unwrapped.bytesValue,
              let subscription = state.withLock({ $0.subscriptions[object] }), subscription.socket == nil else { return }
        subscription.handler([GATTValue(handle: subscription.valueHandle, value: value[...], isIndication: subscription.isIndication)])
    }

    /// BlueZ's `Disconnected(reason, message)` signal, where it sends one.
    func disconnectedSignal(reason: String) {
        state.withLock { $0.reportedReason = BlueZDisconnection.status(forReason: reason) }
    }

    /// The link is down: every waiter and subscription hears it once.
    func linkDidEnd(reason given: HCIStatus?) {
        let ended = state.withLock { state -> (HCIStatus, [CheckedContinuation<HCIStatus, any Error>], [CheckedContinuation<Void, any Error>],
                                              [Subscription], [BlueZWriteSocket])? in
            guard state.isConnected || !state.disconnectWaiters.isEmpty else { return nil }
            // BlueZ 5.66 does not say why a link ended; without its word the reason is unknown.
            let reason = given ?? state.reportedReason ?? .unspecifiedError
            state.isConnected = false
            state.disconnectReason = reason
            state.resolving?.cancel()
            defer {
                state.disconnectWaiters = [:]
                state.resolveWaiters = [:]
                state.pairedWaiters = [:]
                state.subscriptions = [:]
                state.writeSockets = [:]
            }
            return (reason, Array(state.disconnectWaiters.values), Array(state.resolveWaiters.values) + Array(state.pairedWaiters.values),
                    Array(state.subscriptions.values), Array(state.writeSockets.values))
        }
        guard let (reason, waiters, resolvers, subscriptions, sockets) = ended else { return }
        waiters.forEach { $0.resume(returning: reason) }
        resolvers.forEach { $0.resume(throwing: HostError.disconnected(reason: reason)) }
        for subscription in subscriptions {
            subscription.socket?.close()
            subscription.ended(.disconnected(reason: reason))
        }
        sockets.forEach { $0.close() }
        let listeners = state.withLock { state in
            defer { state.serviceChangeListeners = [:] }
            return Array(state.serviceChangeListeners.values)
        }
        listeners.forEach { $0.finish() }
        central?.connectionDidEnd(self)
    }

    /// Builds the database once BlueZ has resolved the services, from its GATT objects read
    /// afresh with `GetManagedObjects`. BlueZ may signal `ServicesResolved` before the
    /// `InterfacesAdded` of those objects (bluez/bluez#1489: bluetoothd sends a device's property
    /// changes and the object manager's additions from separate idle callbacks, in either order),
    /// and a database built from the signals alone then lacked services (a CI run's app stopped
    /// when its read found no Device Information service). bluetoothd registers the objects
    /// before it sets `ServicesResolved`, so the call sees them all; the signals that follow
    /// add nothing to it. Without a bus (or if the call fails) the signals' objects are used.
    /// `afresh` (a new `ServicesResolved`): a read already under way may predate it, so the
    /// objects are read once more after it; otherwise that read serves.
    private func resolveDatabase(afresh: Bool = false) {
        guard let central, central.tree().properties(path, BlueZ.device)?["ServicesResolved"]?.boolValue == true else { return }
        let device = path
        state.withLock { state in
            guard state.resolving == nil else {
                if afresh { state.resolvesAgain = true }
                return
            }
            state.resolvesAgain = false
            state.resolving = Task { [weak self] in
                while true {
                    await central.loadGATTObjects(of: device)
                    // Asked again meanwhile: read again; else done, in one step under the lock.
                    let done = self?.state.withLock { state -> Bool in
                        if state.resolvesAgain, !Task.isCancelled {
                            state.resolvesAgain = false
                            return false
                        }
                        state.resolving = nil
                        return true
                    } ?? true
                    if done { break }
                }
                guard !Task.isCancelled else { return }
                self?.refreshDatabase()
            }
        }
    }

    /// Rebuilds the database from BlueZ's objects once it has resolved the services.
    private func refreshDatabase() {
        guard let central else { return }
        let tree = central.tree()
        guard tree.properties(path, BlueZ.device)?["ServicesResolved"]?.boolValue == true else { return }
        let database = BlueZGATTDatabase(tree: tree, device: path)
        let mtu = tree.gattObjects(of: path).compactMap { $0.properties["MTU"]?.uint16Value }.max()
        let waiters = state.withLock { state in
            state.database = database
            if let mtu { state.mtu = mtu }
            defer { state.resolveWaiters = [:] }
            return Array(state.resolveWaiters.values)
        }
        waiters.forEach { $0.resume() }
    }

    /// A GATT service appeared after discovery: the peer's database changed (BlueZ handled
    /// its Service Changed indication).
    func gattObjectsChanged(added object: DBusObjectPath, isService: Bool) {
        guard let before = state.withLock({ $0.database }) else { return }
        refreshDatabase()
        guard let clock = central?.clock else { return }
        // BlueZ exports a new service's object first and its characteristics' and descriptors'
        // just after, in one burst: the change is published once the burst is over (no GATT
        // object of this link for 250 ms), so that what the app reads then is there.
        let start = isService ? BlueZGATTDatabase.handle(in: object) : nil
        let known = start.map { start in before.services.contains { $0.service.handleRange.lowerBound == start } } ?? false
        let flush = Task { [weak self] in
            do { try await clock.sleep(for: .milliseconds(250)) } catch { return }
            self?.publishAddedServices()
        }
        let previous = state.withLock { state -> Task<Void, Never>? in
            if isService, state.addedServices[object] == nil { state.addedServices[object] = known }
            defer { state.addedServicesFlush = flush }
            return state.addedServicesFlush
        }
        previous?.cancel()
    }

    /// Publishes the services added after discovery that the database did not hold.
    private func publishAddedServices() {
        refreshDatabase()
        let (added, database) = state.withLock { state in
            defer {
                state.addedServices = [:]
                state.addedServicesFlush = nil
            }
            return (state.addedServices, state.database)
        }
        guard let database, let tree = central?.tree() else { return }
        for (service, wasKnown) in added.sorted(by: { $0.key.description < $1.key.description }) where !wasKnown {
            guard let start = tree.properties(service, BlueZ.gattService)?["Handle"]?.uint16Value ?? BlueZGATTDatabase.handle(in: service),
                  let found = database.services.first(where: { $0.service.handleRange.lowerBound == start }) else { continue }
            central?.logger.info("\(peer): service \(found.service.uuid) at \(found.service.handleRange) appeared after discovery")
            publish(GATTServiceChange(affectedHandles: found.service.handleRange, invalidatedServices: []))
        }
    }

    /// A GATT service is about to go (its InterfacesRemoved), with the tree as it still is.
    func gattServiceWillBeRemoved(_ service: DBusObjectPath, tree: BlueZObjectTree) {
        guard let database = state.withLock({ $0.database }),
              let start = tree.properties(service, BlueZ.gattService)?["Handle"]?.uint16Value ?? BlueZGATTDatabase.handle(in: service),
              let removed = database.services.first(where: { $0.service.handleRange.lowerBound == start }) else { return }
        publish(GATTServiceChange(affectedHandles: removed.service.handleRange, invalidatedServices: [removed.service]))
    }

    private func publish(_ change: GATTServiceChange) {
        let listeners = state.withLock { Array($0.serviceChangeListeners.values) }
        listeners.forEach { $0.yield(change) }
    }

    // MARK: GAP

    func disconnect(reason: HCIStatus) async throws {
        guard isConnected, let central else { return }
        try await central.call(path, BlueZ.device, "Disconnect", operation: "disconnecting from \(peer)")
        linkDidEnd(reason: .connectionTerminatedByLocalHost)
    }

    func waitForDisconnection() async throws -> HCIStatus {
        try await wait(in: \.disconnectWaiters) { state in
            guard !state.isConnected, let reason = state.disconnectReason else { return nil }
            return .success(reason)
        }
    }

    /// BlueZ has the RSSI of a device only while it discovers (`Device1.RSSI`); for a connected
    /// device without it there is no D-Bus call that reads it.
    func readRSSI() async throws -> Int8 {
        try requireConnected()
        if let rssi = central?.tree().properties(path, BlueZ.device)?["RSSI"]?.int16Value { return Int8(clamping: rssi) }
        throw HostError.unsupported("BlueZ reports a device's RSSI only while it discovers (Device1.RSSI); it has no D-Bus call that "
            + "reads the RSSI of a connection (btmgmt conn-info or hcitool rssi read it from the kernel)")
    }

    func setPHY(_ preference: PHYPreference) async throws -> ConnectionPHY {
        throw HostError.unsupported("PHY control: BlueZ's D-Bus API has no call for LE Set PHY (btmgmt phy sets the adapter's defaults)")
    }

    func setDataLength(octets: UInt16?, time: UInt16?) async throws -> DataLength {
        throw HostError.unsupported("data length control: BlueZ's D-Bus API has no call for LE Set Data Length (the kernel sets it)")
    }

    func updateParameters(_ preference: ConnectionParameterPreference) async throws -> ConnectionParameters {
        throw HostError.unsupported("connection parameter requests: BlueZ's D-Bus API has no call for them "
            + "(the kernel's defaults are in /sys/kernel/debug/bluetooth/hciN/conn_min_interval and conn_max_interval)")
    }

    func linkUpdates() -> AsyncStream<LinkChange> {
        // BlueZ does not report PHY, data length or parameter changes.
        AsyncStream { $0.finish() }
    }

    func openChannel(psm: UInt16, parameters: L2CAPChannelParameters) async throws(L2CAPChannelError) -> L2CAPChannel {
        throw .host(.unsupported("L2CAP channels through Bluejay's channel API: over BlueZ the kernel owns the channels; open an "
            + "AF_BLUETOOTH L2CAP socket (BTPROTO_L2CAP, SOCK_SEQPACKET, PSM \(psm)) to the device yourself"))
    }

    // MARK: Security

    /// How long `pair()` waits for BlueZ's answer to Pair once the link has ended, before it
    /// throws ``HostError/disconnected(reason:)``.
    static let pairAnswerGrace: Duration = .seconds(5)

    func pair(authenticated: Bool) async throws -> LinkSecurity {
        try requireConnected()
        guard let central else { throw HostError.notPoweredOn }
        // Pairing waits for the user at both ends: bounded by BlueZ's own timeouts, not the call's.
        let pairCall = { @Sendable [path, peer] in
            _ = try await central.call(path, BlueZ.device, "Pair", timeout: .seconds(120), operation: "pairing with \(peer)")
        }
        if security.isEncrypted {
            try await pairCall()   // already paired: BlueZ answers at once (AlreadyExists)
        } else {
            // BlueZ 5.66 may never answer Pair: a pairing that ends while its own service
            // discovery (started on connecting) still runs hands the call to that busy discovery,
            // which drops it (src/device.c, device_bonding_complete). A loaded guest showed it, one
            // pairing in five. `Paired` turning true says the pairing succeeded; a failed one is
            // still answered with its error.
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(operation: pairCall)
                group.addTask {
                    do {
                        try await self.untilPaired()
                    } catch let HostError.disconnected(reason) {
                        // A failed pairing ends the link (the kernel disconnects), and BlueZ
                        // answers Pair with the pairing's error (AuthenticationFailed for a wrong
                        // passkey; src/device.c, device_bonding_failed), often just after the
                        // link's end: that answer says why, "disconnected" does not.
                        try await central.clock.sleep(for: Self.pairAnswerGrace)
                        throw HostError.disconnected(reason: reason)
                    }
                }
                try await group.next()
                group.cancelAll()
            }
        }
        try? await central.setProperty("Trusted", to: .boolean(true), interface: BlueZ.device, at: path, operation: "trusting \(peer)")
        let security = await settledSecurity()
        if authenticated, !security.isAuthenticated {
            // BlueZ pairs with what both sides' IO capabilities allow and does not say which method ran.
            central.logger.notice("BlueZ does not say whether the pairing with \(peer) was authenticated")
        }
        return security
    }

    func secure(authenticated: Bool) async throws -> LinkSecurity {
        try requireConnected()
        let current = security
        if current.isEncrypted { return current }
        return try await pair(authenticated: authenticated)
    }

    /// Returns once BlueZ says the device is paired (`Paired` true); throws when the link ends
    /// first or the task is cancelled.
    private func untilPaired() async throws {
        try await wait(in: \.pairedWaiters, unlessNow: { state in
            state.isConnected ? nil : .failure(HostError.disconnected(reason: state.disconnectReason ?? .unknownConnectionIdentifier))
        }, orOnceWaiting: { [path] in
            // Paired may have turned true before the waiter was in place.
            self.central?.tree().properties(path, BlueZ.device)?["Paired"]?.boolValue == true ? () : nil
        })
    }

    /// Waits in one of `State`'s waiter tables until resumed (by the event it waits for, or by
    /// ``linkDidEnd(reason:)``), or cancelled. `unlessNow`, under the lock, answers at once when
    /// there is nothing to wait for. `orOnceWaiting`, outside the lock once the waiter is in
    /// place, answers what the lock does not cover (the central's object tree: reading it under
    /// our lock would order this lock before the central's, which takes them the other way).
    private func wait<T: Sendable>(in table: WritableKeyPath<State, [UInt64: CheckedContinuation<T, any Error>]> & Sendable,
                                   unlessNow: (State) -> Result<T, any Error>?,
                                   orOnceWaiting: () -> T? = { nil }) async throws -> T {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let now = state.withLock { state -> Result<T, any Error>? in
                    if let now = unlessNow(state) { return now }
                    // Cancelled before the waiter is in place: the cancellation handler has run
                    // (or waits for this lock, and then finds the waiter).
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state[keyPath: table][id] = continuation
                    return nil
                }
                if let now { return continuation.resume(with: now) }
                if let value = orOnceWaiting() { state.withLock { $0[keyPath: table].removeValue(forKey: id) }?.resume(returning: value) }
            }
        } onCancel: {
            state.withLock { $0[keyPath: table].removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// The security once BlueZ's Paired property has caught up with a Pair that returned.
    private func settledSecurity() async -> LinkSecurity {
        for _ in 0..<50 where !security.isEncrypted {
            guard let central else { break }
            try? await central.clock.sleep(for: .milliseconds(20))
        }
        return security
    }

    func raisingSecurity<T: Sendable>(_ body: () async throws -> T, willRaise: (ATTErrorCode) -> Void) async throws -> T {
        do {
            return try await body()
        } catch let HostError.att(error) where error.code == .insufficientAuthentication || error.code == .insufficientEncryption {
            willRaise(error.code)
            _ = try await pair(authenticated: error.code == .insufficientAuthentication && security.isEncrypted)
            return try await body()
        }
    }

    /// bluetoothd keeps (and checks) the databases of bonded devices itself.
    func prepareDatabase() async throws -> GATTDatabasePreparation { .notEligible }

    // MARK: GATT

    private func requireConnected() throws {
        if let reason = state.withLock({ $0.isConnected ? nil : ($0.disconnectReason ?? .unknownConnectionIdentifier) }) {
            throw HostError.disconnected(reason: reason)
        }
    }

    /// The database once BlueZ has resolved the services (bounded by the caller's deadline).
    func database() async throws -> BlueZGATTDatabase {
        try requireConnected()
        if let database = state.withLock({ $0.database }) { return database }
        resolveDatabase()
        try await wait(in: \.resolveWaiters) { state in
            if state.database != nil { return .success(()) }
            // The link ended since requireConnected(): linkDidEnd has answered every waiter then.
            return state.isConnected ? nil : .failure(HostError.disconnected(reason: state.disconnectReason ?? .unspecifiedError))
        }
        try requireConnected()
        guard let database = state.withLock({ $0.database }) else { throw HostError.disconnected(reason: .unspecifiedError) }
        return database
    }

    func discoverDatabase() async throws -> [GATTDiscoveredService] {
        try await database().services
    }

    func discoverAllPrimaryServices() async throws -> [GATTService] {
        try await database().services.map(\.service).filter(\.isPrimary)
    }

    func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTService] {
        try await discoverAllPrimaryServices().filter { $0.uuid == uuid }
    }

    func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic] {
        try await database().services.first { $0.service.handleRange == service.handleRange }?.characteristics.map(\.characteristic) ?? []
    }

    func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor] {
        try await database().services.lazy.flatMap(\.characteristics)
            .first { $0.characteristic.valueHandle == characteristic.valueHandle }?.descriptors ?? []
    }

    private func objectPath(of characteristic: GATTCharacteristic) async throws -> DBusObjectPath {
        guard let path = try await database().characteristicPaths[characteristic.valueHandle] else {
            throw HostError.notFound("characteristic \(characteristic.uuid) (handle \(Hex.format(characteristic.valueHandle))) in BlueZ's objects")
        }
        return path
    }

    private func objectPath(of descriptor: GATTDescriptor) async throws -> DBusObjectPath {
        guard let path = try await database().descriptorPaths[descriptor.handle] else {
            throw HostError.notFound("descriptor \(descriptor.uuid) (handle \(Hex.format(descriptor.handle))) in BlueZ's objects")
        }
        return path
    }

    /// The longest wait for BlueZ's answer to a GATT call (see ``gattCall(_:_:_:_:handle:operation:)``),
    /// as long as for `Pair`.
    static let gattCallTimeout: Duration = .seconds(120)

    /// Calls a GATT object; an ATT refusal names the handle.
    private func gattCall(_ object: DBusObjectPath, _ interface: String, _ member: String, _ arguments: [DBusValue],
                          handle: UInt16, operation: String) async throws -> [DBusValue] {
        guard let central else { throw HostError.notPoweredOn }
        do {
            // BlueZ answers a GATT call within its own bounds, which pass the default 25 s: its
            // ATT transaction timeout is 30 s, and on Insufficient Encryption or Authentication it
            // raises the link's security first, pairing if it must (the SMP timer, the agent's
            // answer). A shorter wait called a slow answer none (a loaded guest, reading a value
            // that needs encryption). The caller's own deadline still ends the call.
            return try await central.call(object, interface, member, arguments, timeout: Self.gattCallTimeout, operation: operation)
        } catch HostError.att(var error) {
            error.handle = handle
            throw HostError.att(error)
        } catch let error as BlueZError {
            // The link went while BlueZ worked on it.
            if !isConnected, let reason = disconnectReason { throw HostError.disconnected(reason: reason) }
            throw error
        }
    }

    func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
        let object = try await objectPath(of: characteristic)
        let reply = try await gattCall(object, BlueZ.gattCharacteristic, "ReadValue", [DBusValue([String: DBusValue]())],
                                       handle: characteristic.valueHandle, operation: "reading \(characteristic.uuid)")
        guard let bytes = reply.first?.bytesValue else { throw BlueZError.unexpectedAnswer("ReadValue answered \(reply)") }
        return bytes
    }

    func read(_ descriptor: GATTDescriptor) async throws -> [UInt8] {
        let object = try await objectPath(of: descriptor)
        let reply = try await gattCall(object, BlueZ.gattDescriptor, "ReadValue", [DBusValue([String: DBusValue]())],
                                       handle: descriptor.handle, operation: "reading \(descriptor.uuid)")
        guard let bytes = reply.first?.bytesValue else { throw BlueZError.unexpectedAnswer("ReadValue answered \(reply)") }
        return bytes
    }

    /// BlueZ writes a value longer than one PDU as a long write (Prepare and Execute Write).
    func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        let object = try await objectPath(of: characteristic)
        _ = try await gattCall(object, BlueZ.gattCharacteristic, "WriteValue", [.bytes(value), DBusValue(["type": DBusValue.string("request")])],
                               handle: characteristic.valueHandle, operation: "writing \(characteristic.uuid)")
    }

    func write(_ value: [UInt8], to descriptor: GATTDescriptor) async throws {
        let object = try await objectPath(of: descriptor)
        _ = try await gattCall(object, BlueZ.gattDescriptor, "WriteValue", [.bytes(value), DBusValue([String: DBusValue]())],
                               handle: descriptor.handle, operation: "writing \(descriptor.uuid)")
    }

    /// Through the socket of `AcquireWrite` where BlueZ offers it (one write, one Write Command;
    /// no D-Bus round trip), else `WriteValue` with type `command`.
    func writeWithoutResponse(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        let object = try await objectPath(of: characteristic)
        if let socket = try await writeSocket(for: object, characteristic: characteristic) {
            guard value.count <= socket.mtu - 3 else {
                throw HostError.invalidArgument("a write without response carries at most \(socket.mtu - 3) bytes (ATT MTU \(socket.mtu) - 3)")
            }
            if try socket.write(value) { return }
            state.withLock { $0.writeSockets[object] = nil }
        }
        _ = try await gattCall(object, BlueZ.gattCharacteristic, "WriteValue", [.bytes(value), DBusValue(["type": DBusValue.string("command")])],
                               handle: characteristic.valueHandle, operation: "writing \(characteristic.uuid) without response")
    }

    private func writeSocket(for object: DBusObjectPath, characteristic: GATTCharacteristic) async throws -> BlueZWriteSocket? {
        if let socket = state.withLock({ $0.writeSockets[object] }) { return socket }
        guard let central, central.tree().properties(object, BlueZ.gattCharacteristic)?["WriteAcquired"] != nil else { return nil }
        guard let reply = try? await central.call(object, BlueZ.gattCharacteristic, "AcquireWrite", [DBusValue([String: DBusValue]())],
                                                  operation: "acquiring the write socket of \(characteristic.uuid)"),
              reply.count == 2, let fd = reply[0].fileDescriptor?.take(), let mtu = reply[1].uint16Value else { return nil }
        let socket = BlueZWriteSocket(descriptor: fd, mtu: Int(mtu))
        state.withLock { state in
            state.writeSockets[object]?.close()
            state.writeSockets[object] = socket
            state.mtu = max(state.mtu, mtu)
        }
        return socket
    }

    func writeSigned(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        throw HostError.unsupported("signed writes: BlueZ's WriteValue has no signed type for a client (bluetoothd signs only with a CSRK it holds)")
    }

    /// Notifications through `AcquireNotify` (a socket: each value one datagram, no D-Bus
    /// message) where BlueZ offers it, else `StartNotify` and the Value's PropertiesChanged.
    func subscribeValues(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16?,
                         ended: @escaping @Sendable (HostError?) -> Void,
                         handler: @escaping @Sendable ([GATTValue]) -> Void) async throws -> any CentralSubscription {
        guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
            throw HostError.unsupported("characteristic \(characteristic.uuid) neither notifies nor indicates")
        }
        guard let central else { throw HostError.notPoweredOn }
        let object = try await objectPath(of: characteristic)
        let isIndication = !characteristic.properties.contains(.notify)
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        if let old = state.withLock({ $0.subscriptions.removeValue(forKey: object) }) {
            old.socket?.close()
            old.ended(nil)
        }
        var subscription = Subscription(id: id, valueHandle: characteristic.valueHandle, isIndication: isIndication, handler: handler, ended: ended)
        let offersSocket = central.tree().properties(object, BlueZ.gattCharacteristic)?["NotifyAcquired"] != nil
        if offersSocket, !isIndication,
           let reply = try? await central.call(object, BlueZ.gattCharacteristic, "AcquireNotify", [DBusValue([String: DBusValue]())],
                                               operation: "acquiring the notification socket of \(characteristic.uuid)"),
           reply.count == 2, let fd = reply[0].fileDescriptor?.take(), let mtu = reply[1].uint16Value {
            state.withLock { $0.mtu = max($0.mtu, mtu) }
            let handle = characteristic.valueHandle
            subscription.socket = BlueZNotifySocket(descriptor: fd, mtu: Int(mtu), deliver: { values in
                handler(values.map { GATTValue(handle: handle, value: $0[...], isIndication: false) })
            }, closed: { [weak self] in
                // BlueZ closes the socket when the link drops or notifications stop.
                self?.subscriptionSocketClosed(object, id: id)
            })
            state.withLock { $0.subscriptions[object] = subscription }
            subscription.socket?.start()
        } else {
            state.withLock { $0.subscriptions[object] = subscription }
            do {
                _ = try await gattCall(object, BlueZ.gattCharacteristic, "StartNotify", [], handle: characteristic.valueHandle,
                                       operation: "enabling notifications of \(characteristic.uuid)")
            } catch {
                state.withLock { state in
                    if state.subscriptions[object]?.id == id { state.subscriptions[object] = nil }
                }
                throw error
            }
        }
        return BlueZSubscription { [weak self] in self?.endSubscription(object, id: id) }
    }

    private func subscriptionSocketClosed(_ object: DBusObjectPath, id: UInt64) {
        guard let subscription = state.withLock({ state -> Subscription? in
            guard state.subscriptions[object]?.id == id else { return nil }
            return state.subscriptions.removeValue(forKey: object)
        }) else { return }
        let reason = disconnectReason
        subscription.ended(reason.map { .disconnected(reason: $0) })
    }

    private func endSubscription(_ object: DBusObjectPath, id: UInt64) {
        guard let subscription = state.withLock({ state -> Subscription? in
            guard state.subscriptions[object]?.id == id else { return nil }
            return state.subscriptions.removeValue(forKey: object)
        }) else { return }
        subscription.ended(nil)
        if let socket = subscription.socket {
            // Closing the acquired socket is how notifications stop (doc/gatt-api.txt).
            socket.close()
        } else if isConnected, let central {
            Task.detached { _ = try? await central.call(object, BlueZ.gattCharacteristic, "StopNotify", operation: "disabling notifications") }
        }
    }

    func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        guard let object = state.withLock({ $0.database?.characteristicPaths[characteristic.valueHandle] }),
              let id = state.withLock({ $0.subscriptions[object]?.id }) else { return }
        endSubscription(object, id: id)
    }

    func serviceChanges() -> AsyncStream<GATTServiceChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: GATTServiceChange.self, bufferingPolicy: .bufferingNewest(64))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.serviceChangeListeners[state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.serviceChangeListeners.removeValue(forKey: id) } }
        if !isConnected, disconnectReason != nil { continuation.finish() }
        return stream
    }

    /// bluetoothd subscribes to Service Changed itself and updates its objects.
    func enableServiceChangedIndications() async throws -> Bool { true }
}

/// A subscription that runs `end` once when cancelled.
struct BlueZSubscription: CentralSubscription {
    private let once: OnceAction

    init(_ end: @escaping @Sendable () -> Void) {
        once = OnceAction(end)
    }

    func cancel() { once.run() }
}

/// An action that runs at most once.
final class OnceAction: Sendable {
    private let action: Mutex<(@Sendable () -> Void)?>

    init(_ action: @escaping @Sendable () -> Void) {
        self.action = Mutex(action)
    }

    func run() {
        let action = self.action.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }
}
