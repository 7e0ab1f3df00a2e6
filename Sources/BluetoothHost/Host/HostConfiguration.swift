import BluetoothCore
import BluetoothHCI
import BluetoothTransport

/// Settings of an ``LEHost``; the defaults suit most uses.
public struct HostConfiguration: Sendable {
    /// How long an ATT request may wait for its response before the bearer is closed. The
    /// specification fixes 30 s (Core 6.0, Vol 3, Part F, 3.3.3); tests may shorten it.
    public var attTransactionTimeout: Duration = .seconds(30)
    /// The ATT MTU this host asks for in Exchange MTU (the largest the specification allows).
    public var preferredATTMTU: UInt16 = 517
    /// Exchange the ATT MTU as soon as a connection is up (as the central).
    public var exchangesMTUOnConnect = true
    /// Ask the controller for the longest LE data PDUs after connecting, when it supports it.
    public var requestsDataLengthExtension = true
    /// How long an HCI command may wait for its answer.
    public var commandTimeout: Duration = .seconds(5)
    /// How long a link-layer procedure (a connection parameter update) may take to complete:
    /// the Link Layer's response timeout, Core 6.0, Vol 6, Part B, 5.2.
    public var linkProcedureTimeout: Duration = .seconds(40)
    /// How long a data length request waits for LE Data Length Change before it returns the
    /// data length in effect: the controller reports only changes (Core 6.0, Vol 4, Part E,
    /// 7.7.65.7), and a peer that allows no more changes nothing.
    public var dataLengthChangeWait: Duration = .seconds(2)
    /// Receive coalescing: after a batch of notifications or advertising reports that come
    /// faster than this window, while the host awaits no answer, the reader may pause this
    /// long before reading again, so that a stream arrives in batches instead of waking a
    /// thread per packet (see `HCIController`). A send ends the pause at once; a slow stream
    /// (values further apart than the window) is never paused for. 1 ms by default, below any
    /// connection interval (7.5 ms at least) and the polling interval of a USB controller;
    /// zero turns it off.
    public var receiveCoalescingWindow: Duration = .milliseconds(1)
    /// The name of this device (GAP Device Name characteristic, advertising).
    public var deviceName = "Bluejay"
    /// The clock of every timeout and timer of the host (HCI commands, connecting, ATT
    /// transactions, the GATT server's handlers and indications): the real clock, or a
    /// manual one in tests, so that a timeout fires when the test moves time.
    public var clock: BluetoothClock = .continuous
    /// The bounds on what the host keeps for later (queues fed by peers and the controller).
    public var limits = HostLimits()
    /// What the Security Manager offers and demands when pairing.
    public var security = SecurityManagerSettings()
    /// Where bonds are kept. The default keeps them in memory, for this host's lifetime; give
    /// a ``FileBondStore`` to keep them across runs.
    public var bondStore: any BondStore = InMemoryBondStore()
    /// Where the GATT databases of bonded and trusted peers are cached between connections
    /// (``LEHost/prepareDatabase(of:)``). `nil`, the default: beside a ``FileBondStore`` on disk
    /// (``FileGATTDatabaseCache/defaultDirectory(bondDirectory:)``), else in memory.
    public var gattDatabaseCache: (any GATTDatabaseCache)?
    /// Where the static random address the host generates as its identity on a controller
    /// without a public address is kept, per adapter, so that bonds count after a restart.
    /// `nil`, the default: beside a ``FileBondStore`` on disk (``FileStaticAddressStore`` in its
    /// directory), else in memory (a new address each run).
    public var staticAddressStore: (any StaticAddressStore)?
    /// This device's Identity Resolving Key, distributed to bonded peers. Keep it across runs
    /// (peers store it); `nil` makes a random one for this host's lifetime.
    public var identityResolvingKey: UInt128?
    /// This device's privacy: off by default (the identity address over the air); with it on,
    /// resolvable private addresses from ``identityResolvingKey``, changed every 15 minutes;
    /// and whether the controller resolves bonded peers' private addresses (see
    /// ``PrivacySettings``).
    public var privacy = PrivacySettings()
    /// Where to record every HCI packet, both ways, as a btsnoop file for Wireshark
    /// (`HCICapture`); `nil`, the default, records nothing. The host wraps its transport in
    /// a `CapturingTransport` and closes the capture in ``LEHost/shutdown()``.
    public var capture: HCICapture?

    public init() {}
}

/// The bounds on the host's queues that peers and the controller feed. Each says what
/// happens at the limit; the GATT server's own are in ``GATTServerSettings``.
public struct HostLimits: Sendable, Equatable {
    /// The controller's: ACL send queue per connection, waiting commands, inbound stream.
    public var hci = HCILimits()
    /// LE signalling and Security Manager PDUs of one link waiting for the host (default 256
    /// per link). Past it that link's PDUs are dropped and counted: each asks the host for work
    /// (a parameter update, a pairing step), a peer needs very few, and only a flooding peer
    /// fills its queue, never another link's.
    public var queuedPeerPDUs = 256
    /// Controller events waiting for the host (default 4096; peers' PDUs do not count). Past
    /// it events are dropped and counted, except those that bring links up or down, which are
    /// always kept so that the host's view of its links stays true.
    public var queuedControllerEvents = 4096

    public init() {}
}
