import BluetoothCore

/// Where a server-bound PDU came from: a connection's ATT bearer, or a client wired in memory.
struct ServerLink: Sendable {
    let connectionHandle: UInt16
    let peer: DeviceAddress?
    /// The connection's ATT bearer, which owns the MTU both roles share (Core 6.0, Vol 3,
    /// Part F, 3.4.2), the link's security, and the way out: a Host connection's, or a loopback
    /// one for a client wired in memory (its PDUs go to the server's sender).
    let bearer: ATTBearer
    /// A client wired in memory (``GATTServer/receive(_:connectionHandle:peer:)``): it is taken
    /// up by its bond's state only once it has talked.
    var isWiredInMemory = false
}

extension ServerLink {
    /// A Host connection's link: its bearer's handle and peer.
    init(_ bearer: ATTBearer) {
        self.init(connectionHandle: bearer.connectionHandle, peer: bearer.peer, bearer: bearer)
    }
}

/// What the server does for a connected client, one at a time in the link's order (queued in
/// the bearer's server half, ``ATTServerQueue``).
enum ServerRequest: Sendable {
    /// A request or command as it arrived: its bytes and the link's security at that moment,
    /// which its permission checks use (a request sent before encryption started is not served
    /// as if it had been encrypted).
    case pdu([UInt8], security: LinkSecurity)
    /// The link was encrypted with a bond's key: the client takes up the bond's state before
    /// the PDUs that came after.
    case encrypted(LinkSecurity)
}

/// What the server keeps for one connected client (its link's MTU and security are the ATT
/// bearer's, ``ServerLink/bearer``): the client's Client Characteristic Configurations (a
/// bonded client's also outlast the connection, with its bond: GATTServer+BondedClients.swift),
/// its prepare queue, its indications and its notifications on their way to the controller.
struct ConnectedClient: Sendable {
    typealias Ticket = CheckedContinuation<Void, any Error>

    /// Tells this client from a later one on a reused connection handle.
    let id: UInt64
    let link: ServerLink
    /// By characteristic value handle; empty configurations are removed.
    var configurations: [UInt16: ClientCharacteristicConfiguration] = [:]
    /// The configurations the client wrote on this link: a bond's stored ones do not replace them.
    var configuredOnLink: Set<UInt16> = []
    var prepareQueue: PreparedWriteQueue
    var indications: IndicationQueue<Ticket>
    var indicationTimer: Task<Void, Never>?
    /// Set after an indication timed out: the bearer carries no more (Vol 3, Part F, 3.3.3).
    var indicationTimedOut = false
    var notificationsInFlight = 0
    /// An update found the queue full; say so when it drains.
    var owesReadyEvent = false
    /// Client Supported Features (Core 6.0, Vol 3, Part G, 7.2) and robust caching state
    /// (2.5.2.1): a new client is change-aware; one that was sent Database Out Of Sync becomes
    /// change-aware with its next request.
    var clientFeatures: UInt8 = 0
    var isChangeAware = true
    var sentOutOfSync = false
    /// The client became change-aware on this link by its own doing (read the Database Hash,
    /// confirmed Service Changed, was told Database Out Of Sync) since the database last changed.
    var hasLearnedDatabase = false
    /// The bond whose state this client took up (``GATTServer/adoptBondIdentity(_:clientID:connectionHandle:)``):
    /// what it changes is kept for that bond while the link stays encrypted with its key.
    var cachingIdentity: DeviceAddress?

    var connectionHandle: UInt16 { link.connectionHandle }
}
