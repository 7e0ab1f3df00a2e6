import BluetoothCore
import BluetoothHCI
import BluetoothHost
import DBus
import Logging
import Synchronization

/// The peripheral role on BlueZ, for `PeripheralManager(backend:)` when bluetoothd keeps the
/// adapter: the published services are exported as a GATT application
/// (`GattManager1.RegisterApplication`) and advertised through `LEAdvertisingManager1`.
///
/// The services, their values and the application's handlers stay in one
/// ``BluetoothHost/GATTServer``, as on our own host; BlueZ's GATT server asks it for every read
/// and write a central makes, and turns a `PropertiesChanged` of a characteristic's `Value` into
/// notifications or indications to the centrals subscribed.
///
/// What BlueZ does not say, and so this backend does not report:
/// - which central subscribed: BlueZ calls `StartNotify` when the first central subscribes and
///   `StopNotify` when the last one leaves. A subscription change is reported for
///   ``anyCentral`` (connection 0, no address), and a pushed value as delivered to it;
/// - why a link ended (BlueZ 5.66): disconnections say Unspecified Error;
/// - the kind of a write: BlueZ 5.66 answers every write of a characteristic that offers Write
///   Without Response itself, so the app gets each as a command (``WriteRequest/needsResponse``
///   false); a characteristic with Write alone waits for the app's answer.
///
/// Security: each characteristic's flags carry what its permissions need of the link
/// (`encrypt-read`, `encrypt-authenticated-write`, `secure-notify`…), and BlueZ refuses a
/// central whose link falls short before it asks. What it could not keep is refused when the
/// service is added (`unsupported`): a minimum key size between 7 and 16 octets (no flag
/// carries it), and an authorization for a notified or indicated value (BlueZ subscribes
/// centrals itself). Only bluetoothd is answered: another client of the bus cannot pose as a
/// central.
public final class BlueZPeripheral: PeripheralBackend, @unchecked Sendable {
    // @unchecked: every mutable field is behind `state` (a Mutex); the rest is let.
    public let backendName = "bluez"
    public let server: GATTServer
    public let addressResolver = AddressResolver()
    public let configuredDeviceName: String
    /// The bus, the adapter and BlueZ's objects (shared with the central role's backend).
    public let bluez: BlueZCentral
    let logger: Logger
    private let linkListeners = AsyncStreamFanOut<PeripheralLinkEvent>()
    private let serverListeners = AsyncStreamFanOut<GATTServerEvent>()
    private let state = Mutex(State())
    /// The last change of the exported application, which the next one waits for.
    private let reconciling = Mutex<Task<Void, Never>?>(nil)

    /// The central a subscription over BlueZ is reported for: BlueZ does not say which.
    public static let anyCentral = (handle: UInt16(0), address: DeviceAddress?.none)

    private struct State: Sendable {
        var application = BlueZGATTApplication(services: [], policy: { _ in nil })
        var isRegistered = false
        var advertisement: [String: DBusValue]?
        var isAdvertising = false
        var notifying: [UInt16: ClientCharacteristicConfiguration] = [:]
        var links: [DBusObjectPath: (handle: UInt16, address: DeviceAddress)] = [:]
        var nextLink: UInt16 = 0
        var bluetoothd: String?
        var watchers: [Task<Void, Never>] = []
        var isStarted = false
    }

    /// A backend on `adapter` (`hci0`; `nil`: BlueZ's first), its GAP name `name` (BlueZ's
    /// own GAP service answers with the adapter's alias; the advertisement carries `name`).
    public init(adapter: String? = nil, name: String = "Bluejay", ioCapability: SMPIOCapability = .noInputNoOutput,
                logger: Logger = Logger(label: "bluejay.bluez.peripheral")) {
        bluez = BlueZCentral(adapter: adapter, ioCapability: ioCapability, logger: logger)
        configuredDeviceName = name
        self.logger = logger
        // Never sends: BlueZ's GATT server is the ATT server here.
        server = GATTServer(logger: logger) { _, _, _ in }
    }

    // MARK: Start and stop

    public func start() async throws {
        try await bluez.start()
        let bus = try bluez.requireBus()
        if state.withLock({ $0.isStarted }) { return }
        do {
            try bus.addObjectManager(at: BlueZGATTApplication.root)
        } catch {
            throw BlueZError.from(error, operation: "exporting the GATT application's object manager")
        }
        let changes: DBusSignalStream
        let added: DBusSignalStream
        do {
            // A device's Connected changing, or a device object appearing connected (a central
            // BlueZ had not seen before); nothing else of BlueZ's, so that a busy scan's
            // signals cannot crowd out a disconnection.
            changes = try await bus.signals(matching: DBusMatchRule(sender: BlueZ.service, interface: DBusConnection.propertiesInterface,
                                                                     member: "PropertiesChanged", arguments: [0: BlueZ.device]))
            added = try await bus.signals(matching: DBusMatchRule(sender: BlueZ.service, interface: DBusConnection.objectManagerInterface,
                                                                   member: "InterfacesAdded"))
        } catch {
            throw BlueZError.from(error, operation: "watching BlueZ's devices (AddMatch)")
        }
        let events = await bluez.backendEvents()
        let watchers = [
            Task { [weak self] in
                do { for try await signal in changes { self?.propertiesChanged(signal) } } catch {}
            },
            Task { [weak self] in
                do { for try await signal in added { self?.propertiesChanged(signal) } } catch {}
            },
            Task { [weak self] in
                for await event in events { await self?.backendEvent(event) }
            },
        ]
        state.withLock { state in
            state.isStarted = true
            state.watchers = watchers
        }
        try await servicesDidChange()
    }

    public func shutdown() async {
        try? await stopAdvertising()
        let (registered, application, watchers) = state.withLock { state in
            defer {
                state.isRegistered = false
                state.watchers = []
                state.isStarted = false
            }
            return (state.isRegistered, state.application, state.watchers)
        }
        if registered { await unregisterApplication() }
        if let bus = try? bluez.requireBus() { for object in application.objects.reversed() { try? bus.unexport(object.path) } }
        watchers.forEach { $0.cancel() }
        let links = state.withLock { state in
            defer { state.links = [:] }
            return Array(state.links.values)
        }
        for link in links {
            linkListeners.yield(.disconnected(handle: link.handle, address: link.address, reason: .connectionTerminatedByLocalHost))
        }
        await bluez.shutdown()
        linkListeners.yield(.closed)
        linkListeners.finish()
        serverListeners.finish()
    }

    public func setPairingAgent(_ agent: any PairingAgent) async {
        await bluez.setPairingAgent(agent)
    }

    // MARK: The GATT application

    /// Exports the published services (not our GAP and GATT services: bluetoothd serves its
    /// own) and registers them with BlueZ, again after each change.
    public func servicesDidChange() async throws {
        // One change at a time, in order: two overlapping ones would export and withdraw the
        // same paths under each other.
        let mine = reconciling.withLock { last -> Task<Result<Void, any Error>, Never> in
            let previous = last
            let task = Task<Result<Void, any Error>, Never> { [weak self] in
                await previous?.value
                guard let self else { return .success(()) }
                do {
                    try await self.reconcile()
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            last = Task { _ = await task.value }
            return task
        }
        try await mine.value.get()
    }

    private func reconcile() async throws {
        guard state.withLock({ $0.isStarted }), let bus = try? bluez.requireBus() else { return }
        let services = await server.services.filter { ![BluetoothUUID(UInt16(0x1800)), BluetoothUUID(UInt16(0x1801))].contains($0.uuid) }
        var policies: [UInt16: GATTAccessPolicy] = [:]
        for service in services {
            for characteristic in service.characteristics {
                policies[characteristic.valueHandle] = await server.accessPolicy(forHandle: characteristic.valueHandle)
                for descriptor in characteristic.descriptors {
                    policies[descriptor.handle] = await server.accessPolicy(forHandle: descriptor.handle)
                }
            }
        }
        try Self.checkExportable(services, policies: policies)
        let application = BlueZGATTApplication(services: services, policy: { policies[$0] })
        let (old, wasRegistered, dropped) = state.withLock { state in
            defer {
                state.application = application
                state.notifying = [:]
            }
            return (state.application, state.isRegistered, state.notifying)
        }
        if wasRegistered { await unregisterApplication() }
        // Registering again, BlueZ forgets every central's subscription (its CCC states go with
        // the old application): they end here too.
        for (handle, _) in dropped.sorted(by: { $0.key < $1.key }) {
            guard let uuid = services.flatMap(\.characteristics).first(where: { $0.valueHandle == handle })?.uuid else { continue }
            serverListeners.yield(.subscriptionChanged(GATTSubscription(connectionHandle: Self.anyCentral.handle, peer: nil, valueHandle: handle,
                                                                        characteristicUUID: uuid, configuration: [])))
        }
        for object in old.objects.reversed() { try? bus.unexport(object.path) }
        guard !application.objects.isEmpty else { return }
        do {
            for object in application.objects {
                try await bus.export([interface(for: object)], at: object.path)
            }
        } catch {
            throw BlueZError.from(error, operation: "exporting the GATT application")
        }
        try await registerApplication()
    }

    /// Refuses what BlueZ would serve with less protection than the permissions ask, rather
    /// than export it: BlueZ subscribes a central itself (the Client Characteristic
    /// Configuration is its own, and `StartNotify` does not say who), so an authorization for a
    /// notified value could never be asked; and its flags carry no key size, so a minimum above
    /// the 7 octets BlueZ accepts could not be kept (Secure Connections, `secure-`, means 16).
    static func checkExportable(_ services: [GATTPublishedService], policies: [UInt16: GATTAccessPolicy]) throws {
        for service in services {
            for characteristic in service.characteristics {
                guard let policy = policies[characteristic.valueHandle] else { continue }
                let what = "characteristic \(characteristic.uuid) over BlueZ"
                if policy.read.authorization, !characteristic.properties.isDisjoint(with: [.notify, .indicate]) {
                    throw HostError.unsupported("\(what): it notifies or indicates a value that needs authorization, and BlueZ "
                        + "subscribes centrals itself without asking the app; drop the authorization or use our host")
                }
                for requirement in [policy.read, policy.write] where requirement.encryption && !requirement.secureConnections
                    && requirement.minimumKeySize > GATTCharacteristicDefinition.encryptionKeySizes.lowerBound {
                    throw HostError.unsupported("\(what): a minimum key size of \(requirement.minimumKeySize) octets has no BlueZ flag "
                        + "(BlueZ accepts 7); require Secure Connections (16 octets) or use our host")
                }
            }
        }
    }

    private func registerApplication() async throws {
        let (_, adapter) = try bluez.requireAdapter()
        try await bluez.call(adapter, BlueZ.gattManager, "RegisterApplication",
                             [.objectPath(BlueZGATTApplication.root), DBusValue([String: DBusValue]())],
                             operation: "registering the GATT application (GattManager1.RegisterApplication)")
        state.withLock { $0.isRegistered = true }
        logger.info("GATT application registered with BlueZ")
    }

    private func unregisterApplication() async {
        state.withLock { $0.isRegistered = false }
        guard let (_, adapter) = try? bluez.requireAdapter() else { return }
        _ = try? await bluez.call(adapter, BlueZ.gattManager, "UnregisterApplication", [.objectPath(BlueZGATTApplication.root)],
                                  timeout: .seconds(5), operation: "unregistering the GATT application")
    }

    /// The D-Bus interface of one exported object, its methods bound to its attribute.
    private func interface(for object: BlueZGATTApplication.Object) -> DBusInterface {
        let properties = object.properties.sorted { $0.key < $1.key }.map { DBusProperty.constant($0.key, $0.value) }
        let handle = object.handle
        let options = DBusArgument("options", .array(.dictEntry(key: .string, value: .variant)))
        let readValue = DBusMethod("ReadValue", inputs: [options], outputs: [.init("value", .array(.byte))]) { [weak self] call in
            guard let self else { throw BlueZGATTApplication.error(.unlikelyError, "stopped") }
            return [.bytes(try await self.read(handle: handle, call))]
        }
        let writeValue = DBusMethod("WriteValue", inputs: [.init("value", .array(.byte)), options]) { [weak self] call in
            guard let self else { throw BlueZGATTApplication.error(.unlikelyError, "stopped") }
            try await self.write(handle: handle, call)
            return []
        }
        guard object.interface == BlueZ.gattCharacteristic else {
            return DBusInterface(object.interface, methods: object.interface == BlueZ.gattDescriptor ? [readValue, writeValue] : [],
                                 properties: properties)
        }
        return DBusInterface(object.interface, methods: [
            readValue, writeValue,
            DBusMethod("StartNotify") { [weak self] call in
                try await self?.setNotifying(true, handle: handle, call)
                return []
            },
            DBusMethod("StopNotify") { [weak self] call in
                try await self?.setNotifying(false, handle: handle, call)
                return []
            },
            // An indication was confirmed (BlueZ 5.66 calls it; nothing waits for it here).
            DBusMethod("Confirm") { _ in [] },
        ], properties: properties + [
            DBusProperty("Notifying", type: .boolean, get: { [weak self] in
                .boolean(self?.state.withLock { $0.notifying[handle] } != nil)
            }),
        ])
    }

    /// Refuses a caller that is not bluetoothd.
    private func requireBlueZ(_ call: DBusMethodCall) async throws {
        guard let sender = call.sender else { throw Self.notBlueZ }
        if state.withLock({ $0.bluetoothd }) == sender { return }
        // Not the owner known (none yet, or bluetoothd restarted): ask the bus who owns org.bluez
        // now. A unique name is never given twice, so an old one cannot be taken over.
        guard let bus = try? bluez.requireBus(), let owner = (try? await bus.nameOwner(BlueZ.service)) ?? nil else { throw Self.notBlueZ }
        state.withLock { $0.bluetoothd = owner }
        guard sender == owner else { throw Self.notBlueZ }
    }

    private static let notBlueZ = DBusError.errorReply(name: "org.bluez.Error.NotAuthorized", message: "only bluetoothd calls this application")

    private static func options(_ value: DBusValue?) -> [String: DBusValue] {
        var options: [String: DBusValue] = [:]
        for entry in value?.dictionaryValue?.entries ?? [] {
            if let key = entry.key.stringValue { options[key] = entry.value.unwrapped }
        }
        return options
    }

    /// The central a call is for (BlueZ's `device` option), as the GATT server names it.
    private func client(_ options: [String: DBusValue]) -> GATTServer.StackClient {
        let mtu = options["mtu"]?.uint16Value.map(Int.init) ?? Int(ATTPDU.defaultLEMTU)
        guard let device = options["device"]?.objectPathValue else {
            return GATTServer.StackClient(connectionHandle: Self.anyCentral.handle, peer: nil, mtu: mtu)
        }
        let link = self.link(for: device)
        return GATTServer.StackClient(connectionHandle: link?.handle ?? Self.anyCentral.handle, peer: link?.address, mtu: mtu)
    }

    private func read(handle: UInt16, _ call: DBusMethodCall) async throws -> [UInt8] {
        try await requireBlueZ(call)
        let options = Self.options(call.arguments.first)
        let offset = options["offset"]?.uint16Value.map(Int.init) ?? 0
        switch await server.read(handle: handle, offset: offset, from: client(options)) {
        case let .value(value): return value
        case let .error(code): throw BlueZGATTApplication.error(code, "read of handle \(Hex.format(handle, digits: 4))")
        }
    }

    /// A write. BlueZ runs a long write's queue itself and calls once per prepared part, with
    /// its offset (`type` "reliable"): each part is written into the stored value from its
    /// offset, so the application sees the value grow and the last call has all of it.
    private func write(handle: UInt16, _ call: DBusMethodCall) async throws {
        try await requireBlueZ(call)
        guard let part = call.arguments.first?.bytesValue else { throw BlueZGATTApplication.error(.unlikelyError, "no value") }
        let options = Self.options(call.arguments.count > 1 ? call.arguments[1] : nil)
        let offset = options["offset"]?.uint16Value.map(Int.init) ?? 0
        var value = part
        if offset > 0 {
            let stored = await server.value(forHandle: handle) ?? []
            guard offset <= stored.count else { throw BlueZGATTApplication.error(.invalidOffset, "write at \(offset)") }
            value = Array(stored.prefix(offset)) + part
        }
        let kind: GATTWriteRequest.Kind
        switch options["type"]?.stringValue {
        case "command": kind = .command
        case "reliable": kind = .preparedWrite
        case "request": kind = .request
        // BlueZ 5.66 does not pass `type`. It does not wait for an answer (NO_REPLY_EXPECTED)
        // to a Write Command, nor to any write of a characteristic that offers Write Without
        // Response (src/gatt-database.c, chrc_write_cb: it answered the central itself), so
        // such a write is a command for the app: its answer would reach nobody.
        default: kind = call.message.flags.contains(.noReplyExpected) ? .command : .request
        }
        if let code = await server.write(value, handle: handle, kind: kind, from: client(options)) {
            throw BlueZGATTApplication.error(code, "write of handle \(Hex.format(handle, digits: 4))")
        }
    }

    private func setNotifying(_ on: Bool, handle: UInt16, _ call: DBusMethodCall) async throws {
        try await requireBlueZ(call)
        let (uuid, configuration): (BluetoothUUID?, ClientCharacteristicConfiguration) = await {
            let published = await server.services.flatMap(\.characteristics).first { $0.valueHandle == handle }
            let properties = published?.properties ?? []
            // BlueZ does not say which a central asked for: notifications where the
            // characteristic offers them, else indications.
            return (published?.uuid, on ? (properties.contains(.notify) ? .notification : .indication) : [])
        }()
        guard let uuid else { return }
        let changed = state.withLock { state -> Bool in
            let was = state.notifying[handle] != nil
            state.notifying[handle] = on ? configuration : nil
            return was != on
        }
        guard changed else { return }
        serverListeners.yield(.subscriptionChanged(GATTSubscription(connectionHandle: Self.anyCentral.handle, peer: nil, valueHandle: handle,
                                                                    characteristicUUID: uuid, configuration: configuration)))
        if let path = state.withLock({ $0.application.characteristicPaths[handle] }), let bus = try? bluez.requireBus() {
            try? bus.emitPropertiesChanged(path: path, interface: BlueZ.gattCharacteristic, changed: ["Notifying": .boolean(on)])
        }
    }

    // MARK: Values

    /// Stores the value and, when a central subscribed, emits it as the characteristic's new
    /// `Value`: BlueZ sends it to every subscribed central as each asked (notification or
    /// indication) and as the link's security allows (the `-notify`/`-indicate` flags).
    public func pushValue(_ value: [UInt8], forHandle valueHandle: UInt16) async throws(GATTServerError) -> GATTValueUpdate {
        try await server.setValue(value, forHandle: valueHandle)
        let (path, configuration) = state.withLock { ($0.application.characteristicPaths[valueHandle], $0.notifying[valueHandle]) }
        guard let path, let configuration, let bus = try? bluez.requireBus() else { return GATTValueUpdate() }
        do {
            try bus.emitPropertiesChanged(path: path, interface: BlueZ.gattCharacteristic, changed: ["Value": .bytes(value)])
        } catch {
            throw .notPermitted("BlueZ cannot be told the value: \(error)")
        }
        return configuration.contains(.notification) ? GATTValueUpdate(notified: [Self.anyCentral.handle])
            : GATTValueUpdate(indicated: [Self.anyCentral.handle])
    }

    public func subscriptions(forHandle valueHandle: UInt16) async -> [GATTSubscription] {
        guard let configuration = state.withLock({ $0.notifying[valueHandle] }),
              let uuid = await server.services.flatMap(\.characteristics).first(where: { $0.valueHandle == valueHandle })?.uuid else { return [] }
        return [GATTSubscription(connectionHandle: Self.anyCentral.handle, peer: nil, valueHandle: valueHandle, characteristicUUID: uuid,
                                 configuration: configuration)]
    }

    public func serverEvents() async -> AsyncStream<GATTServerEvent> {
        serverListeners.makeStream()
    }

    // MARK: Advertising

    public func startAdvertising(_ data: AdvertisingData, scanResponse: AdvertisingData?, parameters: AdvertisingParameters) async throws {
        let properties = try BlueZLEAdvertisement.properties(data, scanResponse: scanResponse, parameters: parameters)
        try await stopAdvertising()
        let (bus, adapter) = try bluez.requireAdapter()
        do {
            try await bus.export([BlueZLEAdvertisement.interface(properties, released: { [weak self] in
                self?.state.withLock { $0.isAdvertising = false }
            })], at: BlueZLEAdvertisement.path)
        } catch {
            throw BlueZError.from(error, operation: "exporting the advertisement")
        }
        do {
            try await bluez.call(adapter, BlueZ.advertisingManager, "RegisterAdvertisement",
                                 [.objectPath(BlueZLEAdvertisement.path), DBusValue([String: DBusValue]())],
                                 operation: "registering the advertisement (LEAdvertisingManager1.RegisterAdvertisement)")
        } catch {
            try? bus.unexport(BlueZLEAdvertisement.path)
            throw error
        }
        state.withLock { state in
            state.advertisement = properties
            state.isAdvertising = true
        }
    }

    public func stopAdvertising() async throws {
        let was = state.withLock { state in
            defer {
                state.advertisement = nil
                state.isAdvertising = false
            }
            return state.advertisement != nil
        }
        guard was, let (bus, adapter) = try? bluez.requireAdapter() else { return }
        _ = try? await bluez.call(adapter, BlueZ.advertisingManager, "UnregisterAdvertisement", [.objectPath(BlueZLEAdvertisement.path)],
                                  timeout: .seconds(5), operation: "unregistering the advertisement")
        try? bus.unexport(BlueZLEAdvertisement.path)
    }

    public var isAdvertising: Bool {
        get async { state.withLock { $0.isAdvertising } }
    }

    // MARK: Links

    public func peripheralLinkEvents() async -> AsyncStream<PeripheralLinkEvent> {
        linkListeners.makeStream()
    }

    public func connectedCentrals() async -> [(handle: UInt16, address: DeviceAddress?)] {
        state.withLock { state in state.links.values.sorted { $0.handle < $1.handle }.map { (handle: $0.handle, address: Optional($0.address)) } }
    }

    private func link(for device: DBusObjectPath) -> (handle: UInt16, address: DeviceAddress)? {
        state.withLock { $0.links[device] }
    }

    /// A device's `Connected` changed: a central came or left. (BlueZ keeps one Device1 per
    /// peer; the link identifier is ours, counted per connection.)
    private func propertiesChanged(_ message: DBusMessage) {
        let path: DBusObjectPath
        let connected: Bool
        var address: DeviceAddress?
        switch (message.interface, message.member) {
        case (DBusConnection.propertiesInterface, "PropertiesChanged"):
            guard let changedPath = message.path,
                  let (interface, changed, _) = try? message.decode(String.self, [String: DBusValue].self, [String].self),
                  interface == BlueZ.device, let isConnected = changed["Connected"]?.unwrapped.boolValue else { return }
            (path, connected) = (changedPath, isConnected)
        case (DBusConnection.objectManagerInterface, "InterfacesAdded"):
            guard let (object, interfaces) = try? message.decode(DBusObjectPath.self, [String: [String: DBusValue]].self),
                  let device = interfaces[BlueZ.device], device["Connected"]?.unwrapped.boolValue == true else { return }
            (path, connected, address) = (object, true, BlueZObjectTree.address(of: device.mapValues(\.unwrapped)))
        default:
            return
        }
        if connected {
            guard let address = address ?? bluez.tree().properties(path, BlueZ.device).flatMap(BlueZObjectTree.address(of:)) else { return }
            let link = state.withLock { state -> (handle: UInt16, address: DeviceAddress)? in
                guard state.links[path] == nil else { return nil }
                state.nextLink = state.nextLink == UInt16.max ? 1 : state.nextLink + 1
                let link = (handle: state.nextLink, address: address)
                state.links[path] = link
                return link
            }
            if let link { linkListeners.yield(.connected(handle: link.handle, address: link.address)) }
        } else if let link = state.withLock({ $0.links.removeValue(forKey: path) }) {
            // BlueZ 5.66 does not say why a link ended.
            linkListeners.yield(.disconnected(handle: link.handle, address: link.address, reason: .unspecifiedError))
        }
    }

    /// bluetoothd left the bus or came back: the application and the advertisement are
    /// registered again when it is back.
    private func backendEvent(_ event: BackendEvent) async {
        switch event {
        case .unavailable:
            let links = state.withLock { state in
                state.isRegistered = false
                state.isAdvertising = false
                state.bluetoothd = nil
                defer { state.links = [:] }
                return Array(state.links.values)
            }
            for link in links { linkListeners.yield(.disconnected(handle: link.handle, address: link.address, reason: .unspecifiedError)) }
        case .available:
            logger.notice("bluetoothd is back: registering the GATT application and the advertisement again")
            do {
                try await servicesDidChange()
                let advertisement = state.withLock { $0.advertisement }
                if advertisement != nil, let (_, adapter) = try? bluez.requireAdapter() {
                    try await bluez.call(adapter, BlueZ.advertisingManager, "RegisterAdvertisement",
                                         [.objectPath(BlueZLEAdvertisement.path), DBusValue([String: DBusValue]())],
                                         operation: "registering the advertisement again")
                    state.withLock { $0.isAdvertising = true }
                }
            } catch {
                logger.error("bluetoothd came back but the peripheral could not register again: \(error)")
            }
        case .identityResolved:
            break
        }
    }
}
