import BluetoothCore

/// Where a server-bound PDU came from: a connection's ATT bearer, or a client wired in memory.
struct ServerLink: Sendable {
    let connectionHandle: UInt16
    let peer: DeviceAddress?
    /// The connection's ATT bearer, which owns the MTU both roles share (Core 6.0, Vol 3,
    /// Part F, 3.4.2); `nil` for a client wired in memory (the server then keeps the MTU).
    let bearer: ATTBearer?
}

/// What the server keeps for one connected client: the bearer's MTU, the client's
/// Client Characteristic Configurations (no client is bonded, so they last as long as the
/// connection, Core 6.0, Vol 3, Part G, 3.3.3.3), its prepare queue, its indications and its
/// notifications on their way to the controller.
struct ServerBearer: Sendable {
    typealias Ticket = CheckedContinuation<Void, any Error>

    /// Tells this bearer from a later one on a reused connection handle.
    let id: UInt64
    let link: ServerLink
    /// The MTU of a link without an ``ATTBearer`` (wired in memory).
    var mtu: UInt16 = ATTPDU.defaultLEMTU
    var hasExchangedMTU = false
    /// By characteristic value handle; empty configurations are removed.
    var configurations: [UInt16: ClientCharacteristicConfiguration] = [:]
    var prepareQueue: PreparedWriteQueue
    var indications: IndicationQueue<Ticket>
    var indicationTimer: Task<Void, Never>?
    /// Set after an indication timed out: the bearer carries no more (Vol 3, Part F, 3.3.3).
    var indicationTimedOut = false
    var notificationsInFlight = 0
    /// An update found the queue full; say so when it drains.
    var owesReadyEvent = false
    /// Requests and commands, served one at a time in arrival order (Vol 3, Part F, 3.3.2).
    let requests: AsyncStream<[UInt8]>.Continuation

    var connectionHandle: UInt16 { link.connectionHandle }
}
