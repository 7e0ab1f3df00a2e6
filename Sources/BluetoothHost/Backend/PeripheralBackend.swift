import BluetoothCore
import BluetoothHCI

/// What the peripheral role (`PeripheralManager`) runs on: our own host (``LEHost``), or
/// BlueZ's GATT server and advertising manager over D-Bus when bluetoothd keeps the adapter.
///
/// Both keep the published services in one ``GATTServer``: on our host it is the ATT server
/// of every link; over BlueZ it has no ATT bearer, and BlueZ's GATT server asks it through
/// ``GATTServer/read(handle:offset:from:)`` and ``GATTServer/write(_:handle:kind:from:)``.
/// What a backend cannot do (BlueZ: advertising sets, L2CAP channels, link settings) the
/// manager refuses with the reason.
public protocol PeripheralBackend: AnyObject, Sendable {
    /// `host` or `bluez`, for logs and errors.
    var backendName: String { get }
    /// The published services, their values and the application's handlers.
    var server: GATTServer { get }
    /// Resolves centrals' private addresses to the identities of bonds.
    var addressResolver: AddressResolver { get }
    /// The name the GAP service starts with.
    var configuredDeviceName: String { get }

    /// Starts the backend (our host: the controller; BlueZ: the bus and the adapter).
    func start() async throws
    /// Stops advertising, ends every link and lets the adapter go.
    func shutdown() async
    /// The published services changed (BlueZ registers the application again).
    func servicesDidChange() async throws

    func startAdvertising(_ data: AdvertisingData, scanResponse: AdvertisingData?, parameters: AdvertisingParameters) async throws
    func stopAdvertising() async throws
    var isAdvertising: Bool { get async }

    /// Pushes a value to the subscribed centrals: who got it, who did not and why.
    func pushValue(_ value: [UInt8], forHandle valueHandle: UInt16) async throws(GATTServerError) -> GATTValueUpdate
    /// The centrals subscribed to a characteristic now.
    func subscriptions(forHandle valueHandle: UInt16) async -> [GATTSubscription]
    /// Subscriptions changing and queues that drained.
    func serverEvents() async -> AsyncStream<GATTServerEvent>
    /// Centrals connecting, resolving and leaving.
    func peripheralLinkEvents() async -> AsyncStream<PeripheralLinkEvent>
    /// Answers pairing prompts (BlueZ: registered as its agent).
    func setPairingAgent(_ agent: any PairingAgent) async
    /// The centrals connected now: their link identifiers and addresses (identity when known).
    func connectedCentrals() async -> [(handle: UInt16, address: DeviceAddress?)]
}

/// A central's link to this peripheral, as the backend saw it change.
public enum PeripheralLinkEvent: Sendable {
    case connected(handle: UInt16, address: DeviceAddress)
    case identityResolved(handle: UInt16, identity: DeviceAddress)
    case bondReplaced(handle: UInt16, address: DeviceAddress, replacement: BondReplacement)
    case disconnected(handle: UInt16, address: DeviceAddress, reason: HCIStatus)
    /// The backend went away (the transport closed, or the daemon left the bus).
    case closed
}
