import BluetoothCore
import BluetoothHCI
import BluetoothTransport

/// One simulated LE controller on a ``VirtualLink``, with its own public address.
///
/// Its host talks to it over standard HCI through ``makeTransport()``, exactly as it would
/// talk to a real controller over UART or USB: commands in, events and ACL data out. The
/// methods here are the test bench's hands: move the device, read what the controller
/// holds, inject faults (see also FaultInjection.swift).
///
/// Values returned by the getters are snapshots; changes made through the methods take
/// effect on the link before they return.
public final class VirtualController: Sendable, Hashable, CustomStringConvertible {
    /// Settings of one controller.
    public struct Configuration: Sendable, Equatable {
        /// HC_LE_ACL_Data_Packet_Length: the largest ACL payload the host may send in one
        /// packet (LE Read Buffer Size). 27 mimics Bumble's virtual controller.
        public var aclDataLength: UInt16
        /// HC_Total_Num_LE_ACL_Data_Packets: how many packets the controller buffers.
        public var aclBufferCount: UInt8
        /// LL data PDUs sent per connection event in each direction.
        public var packetsPerConnectionEvent: Int
        /// Transmit power in dBm, for advertising and connections.
        public var txPower: Int8
        /// The weakest signal received, in dBm.
        public var sensitivity: Int8
        /// The LE features it claims (LE Read Local Supported Features) and its peers read.
        public var leFeatures: LEFeatures
        /// The longest LL data PDU payload it sends and receives (27...251).
        public var maximumDataLength: UInt16
        /// The company identifier in its version information (0xFFFF: none, for testing).
        public var companyIdentifier: UInt16
        /// How many connections it keeps at once.
        public var maximumConnections: Int
        /// How many extended advertising sets it runs at once (LE Read Number of Supported
        /// Advertising Sets), 1...240.
        public var maximumAdvertisingSets: Int = 4
        /// The most advertising or scan response data a set holds (LE Read Maximum
        /// Advertising Data Length), 31...1650.
        public var maximumAdvertisingDataLength: Int = 1650 {
            didSet { maximumAdvertisingDataLength = min(1650, max(31, maximumAdvertisingDataLength)) }
        }
        /// Whether it has a public address. Without one, as Zephyr's `hci_uart` on an
        /// nRF52840, Read BD_ADDR answers 00:00:00:00:00:00, and own address type public
        /// advertises, scans and connects from 00:00:00:00:00:00 (the controller's
        /// ``VirtualController/address`` then only names it on the link).
        public var hasPublicAddress = true
        /// The static random address it reports through Zephyr's vendor commands (Read Version
        /// Information 0xFC01, Read Supported Commands 0xFC02, Read Static Addresses 0xFC09), as
        /// Zephyr's controller on a chip with a factory address does; `nil`, the default: it
        /// answers them Unknown HCI Command, as any other controller.
        public var zephyrStaticAddress: BluetoothAddress?
        /// How many entries its resolving list holds (LE Read Resolving List Size). With
        /// `LEFeatures/llPrivacy` in ``leFeatures`` it resolves peers' private addresses
        /// with the list once its host enables address resolution.
        public var resolvingListSize = ResolvingList.capacity
        /// Whether a new connection takes the lowest free handle, so that the next link gets the
        /// handle of the one that just ended, as Bumble's controller and many others do (a test
        /// of what a host does on a reused handle). Off by default: each link a new handle.
        public var reusesHandles = false

        public init(aclDataLength: UInt16 = 251, aclBufferCount: UInt8 = 8, packetsPerConnectionEvent: Int = 4,
                    txPower: Int8 = 0, sensitivity: Int8 = -90, leFeatures: LEFeatures = VirtualController.defaultLEFeatures,
                    maximumDataLength: UInt16 = 251, companyIdentifier: UInt16 = 0xFFFF, maximumConnections: Int = 16) {
            self.aclDataLength = max(1, aclDataLength)
            self.aclBufferCount = max(1, aclBufferCount)
            self.packetsPerConnectionEvent = max(1, packetsPerConnectionEvent)
            self.txPower = txPower
            self.sensitivity = sensitivity
            self.leFeatures = leFeatures
            self.maximumDataLength = min(251, max(27, maximumDataLength))
            self.companyIdentifier = companyIdentifier
            self.maximumConnections = max(1, maximumConnections)
        }
    }

    /// The LE features of a virtual controller by default: the link-layer procedures it
    /// simulates, encryption included.
    public static let defaultLEFeatures: LEFeatures = [
        .encryption, .connectionParametersRequest, .extendedReject, .peripheralInitiatedFeaturesExchange,
        .dataPacketLengthExtension, .le2MPHY, .channelSelectionAlgorithm2, .extendedAdvertising,
    ]

    /// The link it is on.
    public let link: VirtualLink
    /// Its name in logs and in its transports' names.
    public let name: String
    /// Its public address (Read BD_ADDR).
    public let address: BluetoothAddress
    let id: ControllerID

    init(link: VirtualLink, id: ControllerID, name: String, address: BluetoothAddress) {
        self.link = link
        self.id = id
        self.name = name
        self.address = address
    }

    /// A new HCI transport to this controller, for a host: `Host(transport: controller.makeTransport())`.
    /// One host at a time: making another transport closes the previous one. The controller
    /// keeps its state between hosts; a new host usually starts with HCI Reset.
    public func makeTransport() -> VirtualControllerTransport {
        let transport = VirtualControllerTransport(controller: self)
        link.attach(transport, to: id)
        return transport
    }

    // MARK: Position and settings

    /// Where the device is, in metres.
    public var position: VirtualPosition {
        link.read { $0.controllers[id]?.position ?? .origin }
    }

    /// Moves the device. Scanners beyond its range stop hearing it; a connection that no
    /// longer gets through ends when its supervision timeout elapses.
    public func move(to position: VirtualPosition) {
        link.performSync { $0.controllers[id]?.position = position }
    }

    /// Its current settings.
    public var configuration: Configuration {
        link.read { $0.controllers[id]?.configuration ?? Configuration() }
    }

    /// Changes its TX power (dBm) and sensitivity (dBm), which set its range.
    public func setRadio(txPower: Int8, sensitivity: Int8) {
        link.performSync { simulation in
            simulation.controllers[id]?.configuration.txPower = txPower
            simulation.controllers[id]?.configuration.sensitivity = sensitivity
        }
    }

    // MARK: State

    /// The handles of its connections, in order.
    public var connectionHandles: [UInt16] {
        link.read { ($0.controllers[id]?.connections.keys).map { Array($0).sorted() } ?? [] }
    }

    /// The controller on the other end of a connection.
    public func peer(ofConnection handle: UInt16) -> VirtualController? {
        let entry = link.read { simulation -> (ControllerID, String, BluetoothAddress)? in
            guard let (connection, role) = simulation.connection(handle, of: id),
                  let peer = simulation.controllers[connection.end(role.peer).controller] else { return nil }
            return (peer.id, peer.name, peer.publicAddress)
        }
        return entry.map { VirtualController(link: link, id: $0.0, name: $0.1, address: $0.2) }
    }

    /// The connection parameters of a connection, in HCI units: interval (1.25 ms),
    /// peripheral latency, supervision timeout (10 ms).
    public func connectionParameters(ofConnection handle: UInt16) -> (interval: UInt16, latency: UInt16, timeout: UInt16)? {
        link.read { simulation in
            simulation.connection(handle, of: id).map { ($0.0.parameters.interval, $0.0.parameters.latency, $0.0.parameters.timeout) }
        }
    }

    /// The LL payload octets this side transmits with on a connection (its data length).
    public func dataLength(ofConnection handle: UInt16) -> UInt16? {
        link.read { simulation in simulation.connection(handle, of: id).map { $0.0.end($0.1).txOctets } }
    }

    /// The long term key a connection is encrypted with (16 octets, least significant
    /// first, as HCI carries it), `nil` while the connection is not encrypted.
    public func encryptionKey(ofConnection handle: UInt16) -> [UInt8]? {
        link.read { simulation in simulation.connection(handle, of: id)?.0.encryptionKey }
    }

    /// LE ACL buffers holding data not yet sent over the air or not yet reported complete.
    public var aclBuffersInUse: Int {
        link.read { $0.controllers[id]?.buffers.inUse ?? 0 }
    }

    /// Legacy advertising or an extended advertising set is enabled.
    public var isAdvertising: Bool {
        link.read { simulation in
            guard let state = simulation.controllers[id] else { return false }
            return state.advertising.isEnabled || state.advertisingSets.values.contains { $0.isEnabled }
        }
    }
    /// Scanning (legacy or extended) is enabled.
    public var isScanning: Bool { link.read { $0.controllers[id]?.scanning.isEnabled ?? false } }
    /// An LE (Extended) Create Connection is pending.
    public var isInitiating: Bool { link.read { $0.controllers[id]?.initiating != nil } }
    /// The identity addresses on its resolving list, in the order they were added.
    public var resolvingList: [DeviceAddress] { link.read { $0.controllers[id]?.resolvingList.entries.map(\.peerIdentity) ?? [] } }
    /// The privacy mode of an identity on its resolving list (LE Set Privacy Mode).
    public func privacyMode(of identity: DeviceAddress) -> PrivacyMode? {
        link.read { $0.controllers[id]?.resolvingList.entries.first { $0.peerIdentity == identity }?.privacyMode }
    }
    /// The local IRK of an identity's entry (16 octets, least significant first; zeros: none).
    public func localIRK(of identity: DeviceAddress) -> [UInt8]? {
        link.read { $0.controllers[id]?.resolvingList.entries.first { $0.peerIdentity == identity }?.localIRK }
    }
    /// LE Set Resolvable Private Address Timeout, in seconds (900 after reset).
    public var resolvablePrivateAddressTimeout: UInt16 { link.read { $0.controllers[id]?.resolvingList.addressTimeout ?? 0 } }
    /// The handles of the advertising sets it holds, enabled or not.
    public var advertisingSetHandles: [UInt8] { link.read { $0.controllers[id]?.advertisingSets.keys.sorted() ?? [] } }
    /// The random address of an advertising set (LE Set Advertising Set Random Address).
    public func randomAddress(ofAdvertisingSet handle: UInt8) -> BluetoothAddress? {
        link.read { $0.controllers[id]?.advertisingSets[handle]?.randomAddress }
    }
    /// The advertising set is enabled (LE Set Extended Advertising Enable).
    public func isAdvertising(set handle: UInt8) -> Bool {
        link.read { $0.controllers[id]?.advertisingSets[handle]?.isEnabled ?? false }
    }
    /// LE Set Address Resolution Enable was last set to on.
    public var isAddressResolutionEnabled: Bool { link.read { $0.controllers[id]?.resolvingList.isResolutionEnabled ?? false } }
    /// The address set with LE Set Random Address.
    public var randomAddress: BluetoothAddress? { link.read { $0.controllers[id]?.randomAddress } }

    // MARK: Identity

    public static func == (lhs: VirtualController, rhs: VirtualController) -> Bool {
        lhs.link === rhs.link && lhs.id == rhs.id
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(link))
        hasher.combine(id)
    }

    public var description: String { "virtual controller \(name) (\(address))" }
}
