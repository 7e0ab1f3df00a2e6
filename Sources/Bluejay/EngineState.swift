import BluetoothHost
import Dispatch
import Foundation

/// Where the link is.
enum LinkState: Sendable {
    case idle
    /// A connection attempt is queued or running (operation `operationID`).
    case connecting(PeripheralIdentifier, operationID: UInt64)
    case connected(PeripheralLink)
    /// A disconnection the app asked for is in progress.
    case disconnecting(PeripheralLink)

    var link: PeripheralLink? {
        switch self {
        case let .connected(link), let .disconnecting(link): return link
        case .idle, .connecting: return nil
        }
    }
}

/// Why a connection is being made.
enum ConnectPurpose: Sendable, Equatable {
    /// ``Bluejay/connect(_:timeout:warningOptions:completion:)`` or a scan's `.connect`.
    case request
    /// Auto-reconnect after an unexpected disconnection.
    case reconnect
    /// Restoration of the previous process's connection, with its listens.
    case restore([CharacteristicIdentifier])
}

/// A running background task.
struct BackgroundTaskState: Sendable {
    let id: UInt64
    /// The thread running it, once it has started.
    var thread: pthread_t?
}

/// Restoration settings and storage, while enabled.
struct RestorationContext: Sendable {
    let config: BackgroundRestoreConfig
    let store: RestorationStore
}

/// Everything mutable in ``Bluejay``, behind one lock. Methods of ``Bluejay`` take the lock,
/// change this, and act (I/O, callbacks) after releasing it.
struct EngineState: Sendable {
    enum Lifecycle: Sendable { case idle, running, stopped }

    var lifecycle: Lifecycle = .idle
    var generation: UInt64 = 0
    /// What Bluejay runs on: our host or BlueZ.
    var backend: (any CentralBackend)?
    var ownsHost = false
    var hostEvents: Task<Void, Never>?
    var options = StartOptions.default
    var isBluetoothAvailable = false
    var isBluetoothStateUpdateImminent = false
    /// Why the controller is unusable, for the errors of operations that need it.
    var unavailableReason = "Bluejay has not been started"

    var link: LinkState = .idle {
        didSet {
            let now = PeripheralState(link)
            if now != PeripheralState(oldValue) { peripheralStateListeners.publish(now) }
        }
    }
    var peripheralStateListeners = PeripheralStateListeners()
    var watchers: [Task<Void, Never>] = []
    var reconnect = AutoReconnectPolicy()
    var lastPeripheral: PeripheralIdentifier?
    var lastTimeout: Timeout = .none
    var defaultWarningOptions = WarningOptions.default

    var scan: ScanSession?
    var listens = ListenRegistry()
    var background: BackgroundTaskState?
    var restoration: RestorationContext?
    var broadcastErrorsToListeners = false

    var connectionObservers = WeakObservers<any ConnectionObserver>()
    var serviceObservers = WeakObservers<any ServiceObserver>()
    var rssiObservers = WeakObservers<any RSSIObserver>()
    /// Who answers pairing questions; given to every host Bluejay starts.
    var pairingAgent: (any PairingAgent)?
    var logObservers = WeakObservers<any LogObserver>()
    var disconnectHandler = WeakObservers<any DisconnectHandler>()
    var notificationObservers = WeakObservers<any NotificationObserver>()
    var connectionTasks: [RegisteredConnectionTask] = []
    var nextConnectionTaskID: UInt64 = 0

    var callbackQueue: DispatchQueue { options.callbackQueue }

    /// The link while it is up. The host's word decides: a link the host reported ended is not
    /// connected, even before Bluejay has handled the disconnection (its handling runs a moment
    /// later, on a task of its own).
    var connectedLink: PeripheralLink? {
        if case let .connected(link) = link, link.connection.isConnected { return link }
        return nil
    }
}
