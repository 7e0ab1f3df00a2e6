import BluetoothCore
import BluetoothHCI

/// What the central role of the app APIs (Bluejay, `BluejayCentral`, the CLI) runs on: this
/// package's own host (``LEHost``, over HCI) or BlueZ (`BluetoothBlueZ.BlueZCentral`, over
/// D-Bus, where bluetoothd keeps the adapter). The two implement the same procedures with the
/// same value types (``Advertisement``, ``GATTService``, ``LinkSecurity``, ``Bond``) and the
/// same errors where they mean the same thing (``HostError``); what a backend cannot do throws
/// ``HostError/unsupported(_:)`` with the reason, never a pretended success.
public protocol CentralBackend: AnyObject, Sendable {
    /// A short name for logs and errors: `"host"` or `"bluez"`.
    var backendName: String { get }
    /// The clock the backend's timers run on (the app APIs time their own limits on it too).
    var clock: BluetoothClock { get }

    /// Makes the backend usable (opens the controller, or finds the adapter). Idempotent.
    func start() async throws
    /// Ends every link and scan and lets go of the controller or the bus.
    func shutdown() async
    /// What the app APIs follow: the backend became unusable (with why) or usable again, and
    /// a link's peer revealed its identity.
    func backendEvents() async -> AsyncStream<BackendEvent>

    /// Starts scanning: `handler` gets the advertisements as they come, in batches; `onEnd`
    /// runs once when the scan ends (`nil` after ``stopScanning()``).
    func startScanning(_ options: ScanOptions, handler: @escaping @Sendable ([Advertisement]) -> Void,
                   onEnd: @escaping @Sendable (HostError?) -> Void) async throws
    /// Stops the scan, if one runs.
    func stopScanning() async

    /// Connects to a peripheral; `nil` timeout tries until the task is cancelled. Cancelling
    /// the task abandons the attempt.
    func openConnection(to peer: DeviceAddress, timeout: Duration?) async throws -> any CentralConnection

    /// Sets who answers pairing questions.
    func setPairingAgent(_ agent: any PairingAgent) async
    /// The bonds the backend keeps.
    func bonds() async -> [Bond]
    /// Forgets the bond with a peer; returns whether there was one.
    func removeBond(with peer: DeviceAddress) async throws -> Bool
    /// Lets the database of a peer without a bond be cached (where the backend caches).
    func setDatabaseTrusted(_ trusted: Bool, for peer: DeviceAddress)
    /// Forgets the cached database of a peer.
    func removeCachedDatabase(for peer: DeviceAddress) async
}

/// What a backend tells the app APIs.
public enum BackendEvent: Sendable {
    /// Usable again (bluetoothd came back).
    case available
    /// Unusable: the HCI transport closed, bluetoothd went away, the adapter was removed.
    case unavailable(String)
    /// A pairing on `connection`, reached at a resolvable private address, revealed the peer's
    /// identity address.
    case identityResolved(connection: any CentralConnection, identity: DeviceAddress)
}

/// One link to a peripheral, as its central: GAP (security, link settings, disconnection) and
/// the GATT client. ``Connection`` is our host's; BlueZ has its own.
public protocol CentralConnection: AnyObject, Sendable {
    /// The peer's address on the link.
    var peer: DeviceAddress { get }
    /// The peer's identity address, once known (a bonded peer reached at a private address).
    var identity: DeviceAddress? { get }
    /// Who the peer is: its identity when known, else its address.
    var peerIdentity: DeviceAddress { get }
    var isConnected: Bool { get }
    /// Why the link ended; `nil` while it is up.
    var disconnectReason: HCIStatus? { get }
    /// The link's encryption and the key's strength.
    var security: LinkSecurity { get }
    /// The ATT MTU in use.
    var attMTU: UInt16 { get }
    var phy: ConnectionPHY { get }
    var dataLength: DataLength { get }
    var parameters: ConnectionParameters { get }

    func disconnect(reason: HCIStatus) async throws
    /// Returns once the link is down, with the reason.
    func waitForDisconnection() async throws -> HCIStatus
    func readRSSI() async throws -> Int8
    func setPHY(_ preference: PHYPreference) async throws -> ConnectionPHY
    func setDataLength(octets: UInt16?, time: UInt16?) async throws -> DataLength
    func updateParameters(_ preference: ConnectionParameterPreference) async throws -> ConnectionParameters
    func linkUpdates() -> AsyncStream<LinkChange>
    func openChannel(psm: UInt16, parameters: L2CAPChannelParameters) async throws(L2CAPChannelError) -> L2CAPChannel

    // MARK: Security

    /// Pairs now, even with a bond.
    func pair(authenticated: Bool) async throws -> LinkSecurity
    /// Encrypts with the bond's key, else pairs; at once when the link already is.
    func secure(authenticated: Bool) async throws -> LinkSecurity
    /// Runs `body`; after a refusal for lack of encryption or authentication, raises the
    /// link's security and runs it once more.
    func raisingSecurity<T: Sendable>(_ body: () async throws -> T, willRaise: (ATTErrorCode) -> Void) async throws -> T
    /// Readies the peer's cached database before discovery (GATT caching).
    func prepareDatabase() async throws -> GATTDatabasePreparation

    // MARK: GATT client

    func discoverAllPrimaryServices() async throws -> [GATTService]
    func discoverPrimaryServices(uuid: BluetoothUUID) async throws -> [GATTService]
    func discoverCharacteristics(of service: GATTService) async throws -> [GATTCharacteristic]
    func discoverDescriptors(of characteristic: GATTCharacteristic) async throws -> [GATTDescriptor]
    /// Every service with its characteristics and descriptors.
    func discoverDatabase() async throws -> [GATTDiscoveredService]
    /// Reads a value, however long.
    func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8]
    func read(_ descriptor: GATTDescriptor) async throws -> [UInt8]
    /// Starts reading the value at `handle` (a characteristic's value handle or a descriptor's
    /// handle) without a task, for the callback API: a value that comes whole in the first
    /// response reaches `completion` on the thread that received it
    /// (``GATTClient/startReadLongValue(handle:within:completion:)``); the rest of a long value,
    /// or a refusal, comes as what is left to run in a task, which, when `raisingSecurity`,
    /// raises the link's security and reads again as ``raisingSecurity(_:willRaise:)`` does.
    /// `scope` bounds the first request's wait. Returns `false`, without calling `completion`,
    /// when the backend has no such start; the caller then runs ``read(_:)`` in a task.
    func startRead(handle: UInt16, raisingSecurity: Bool, within scope: RequestScope,
                   completion: @escaping @Sendable (StartedProcedure<[UInt8]>) -> Void) -> Bool
    /// Writes with response, however long (a long write past one PDU).
    func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws
    func write(_ value: [UInt8], to descriptor: GATTDescriptor) async throws
    /// Starts writing `value` with response at `handle` without a task, for the callback API,
    /// as ``startRead(handle:raisingSecurity:within:completion:)`` starts a read: the
    /// acknowledgement of a value that fits in one Write Request reaches `completion` on the
    /// thread that received it (``GATTClient/startWriteValue(_:handle:within:completion:)``);
    /// a refusal comes as what is left to run in a task, which, when `raisingSecurity`, raises
    /// the link's security and writes again. Returns `false`, without calling `completion`,
    /// when the backend has no such start or the value needs a long write.
    func startWrite(_ value: [UInt8], handle: UInt16, raisingSecurity: Bool, within scope: RequestScope,
                    completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool
    func writeWithoutResponse(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws
    func writeSigned(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws
    /// Turns notifications (or indications) on; `handler` gets the values in batches, `ended`
    /// runs once when the subscription ends (with the error when the link dropped).
    func subscribeValues(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16?,
                         ended: @escaping @Sendable (HostError?) -> Void,
                         handler: @escaping @Sendable ([GATTValue]) -> Void) async throws -> any CentralSubscription
    func unsubscribe(from characteristic: GATTCharacteristic) async throws
    /// The peer's database changes (Service Changed).
    func serviceChanges() -> AsyncStream<GATTServiceChange>
    /// Turns Service Changed indications on (where the backend does not itself).
    func enableServiceChangedIndications() async throws -> Bool
}

/// A subscription of ``CentralConnection/subscribeValues(to:clientConfigurationHandle:ended:handler:)``.
public protocol CentralSubscription: Sendable {
    /// Stops the values at once; idempotent.
    func cancel()
}

extension CentralConnection {
    /// None, by default: the caller runs ``read(_:)`` in a task.
    public func startRead(handle: UInt16, raisingSecurity: Bool, within scope: RequestScope,
                          completion: @escaping @Sendable (StartedProcedure<[UInt8]>) -> Void) -> Bool {
        false
    }

    /// None, by default: the caller runs ``write(_:to:)`` in a task.
    public func startWrite(_ value: [UInt8], handle: UInt16, raisingSecurity: Bool, within scope: RequestScope,
                           completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool {
        false
    }

    /// Finds a characteristic by UUID in a service found by UUID.
    public func findCharacteristic(_ characteristicUUID: BluetoothUUID, inService serviceUUID: BluetoothUUID) async throws -> GATTCharacteristic {
        guard let service = try await discoverPrimaryServices(uuid: serviceUUID).first else {
            throw HostError.notFound("service \(serviceUUID)")
        }
        guard let characteristic = try await discoverCharacteristics(of: service).first(where: { $0.uuid == characteristicUUID }) else {
            throw HostError.notFound("characteristic \(characteristicUUID) in service \(serviceUUID)")
        }
        return characteristic
    }
}
