/// Limits and timeouts of a ``GATTServer``; the defaults suit most uses.
public struct GATTServerSettings: Sendable, Hashable {
    /// Notifications per connection handed to the controller's queue but not yet taken by the
    /// controller. Past this, an update reports the connection's queue as full and
    /// ``GATTServerEvent/readyToUpdateSubscribers(connectionHandle:)`` follows once it drains.
    public var maximumPendingNotifications = 16
    /// Indications per connection waiting behind the one awaiting its confirmation.
    public var maximumQueuedIndications = 32
    /// Indications kept for each bonded client that subscribed to them and is away (no link
    /// encrypted with its bond's key), delivered in order once it is back. Past this the oldest
    /// is dropped and counted (``GATTServer/droppedDeferredIndicationCount``); 0 keeps none. Kept
    /// in memory only: a restart loses them.
    public var maximumDeferredIndications = 16
    /// Prepare Write Requests one client may queue before Prepare Queue Full
    /// (Core 6.0, Vol 3, Part F, 3.4.6.1).
    public var maximumPreparedWrites = 64
    /// ATT PDUs (requests, commands, confirmations) one connection may have waiting for the
    /// server. A client may send one request at a time (Core 6.0, Vol 3, Part F, 3.3.2), so
    /// only a flood of Write Commands or a client breaking the protocol reaches this: further
    /// PDUs are dropped and counted (``GATTServer/droppedPDUCount``).
    public var maximumQueuedPDUs = 64
    /// How long an indication waits for its confirmation: the ATT transaction timeout,
    /// 30 s (Core 6.0, Vol 3, Part F, 3.3.3). Tests may shorten it.
    public var indicationTimeout: Duration = .seconds(30)
    /// How long a read or write handler may take before the request is answered with
    /// Unlikely Error, well inside the client's 30 s transaction timeout.
    public var handlerTimeout: Duration = .seconds(20)

    public init() {}
}
