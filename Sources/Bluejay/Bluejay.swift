import BluetoothHost
import Dispatch
import Foundation
import Logging
import Synchronization

/// The app API of the Bluejay READMEs, on this project's host stack: one peripheral at a
/// time, a FIFO queue of operations, callbacks on a queue of your choice, background tasks
/// with a ``SynchronizedPeripheral``, and `async` twins of everything.
///
/// ```swift
/// let bluejay = Bluejay()
/// bluejay.start()
/// bluejay.connect(sensor, timeout: .seconds(15)) { result in ... }
/// bluejay.read(from: bodySensorLocation) { (result: ReadResult<UInt8>) in ... }
/// ```
///
/// Thread-safe: every function may be called from any thread, and none blocks (except the
/// ``SynchronizedPeripheral``'s, inside a background task). Requests run one at a time in
/// the order they were made; each reports to its own callback, exactly once.
public final class Bluejay: Sendable {
    let state: Mutex<EngineState>
    let runner: OperationRunner
    let logger: Logger
    /// Serializes writes of the restoration file with the decision of what to write, so a
    /// record computed while running cannot land after the empty one written at stop.
    let restorationWrites = Mutex(())
    /// The streams of ``connectionEvents()``; they outlive a stop and a new start.
    let connectionEventListeners = AsyncStreamFanOut<ConnectionEvent>()
    /// The streams of ``notifications()``.
    let notificationListeners = AsyncStreamFanOut<CharacteristicNotification>(bufferLimit: Bluejay.listenBufferLimit)

    /// A Bluejay that does nothing until ``start(mode:)``.
    /// - Parameter logger: where Bluejay logs (swift-log); ``LogObserver``s get the same lines.
    public init(logger: Logger = Logger(label: "bluejay")) {
        self.logger = logger
        let state = Mutex(EngineState())
        self.state = state
        var queueLogger = logger
        queueLogger[metadataKey: "part"] = "queue"
        runner = OperationRunner(suspended: true) { [queueLogger] message in
            queueLogger.debug("\(message())")  // made only when debug logging is on
        }
    }

    // MARK: State

    /// Whether ``start(mode:)`` was called (and Bluejay not stopped since).
    public var hasStarted: Bool { state.withLock { $0.lifecycle == .running } }
    /// Whether the controller is up and usable.
    public var isBluetoothAvailable: Bool { state.withLock { $0.isBluetoothAvailable } }
    /// Whether the controller is being opened and initialized: availability is about to be known.
    public var isBluetoothStateUpdateImminent: Bool { state.withLock { $0.isBluetoothStateUpdateImminent } }
    /// Whether a connection is being made (requested, auto-reconnect or restoration).
    public var isConnecting: Bool { state.withLock { if case .connecting = $0.link { return true } else { return false } } }
    public var isConnected: Bool { state.withLock { $0.connectedLink != nil } }
    /// Whether a disconnection the app asked for is in progress.
    public var isDisconnecting: Bool { state.withLock { if case .disconnecting = $0.link { return true } else { return false } } }
    /// Whether a lost connection will be re-established (see ``DisconnectHandler``).
    public var shouldAutoReconnect: Bool { state.withLock { $0.reconnect.shouldAutoReconnect } }
    /// Whether a scan is running or waiting in the queue.
    public var isScanning: Bool { state.withLock { $0.scan != nil } }
    /// Whether Bluejay persists its connection for restoration (`BackgroundRestoreMode/enable(_:)`).
    public var isBackgroundRestorationEnabled: Bool { state.withLock { $0.restoration != nil } }
    /// Whether a background task is running.
    public var isRunningBackgroundTask: Bool { state.withLock { $0.background != nil } }
    /// The connected peripheral.
    public var connectedPeripheral: PeripheralIdentifier? { state.withLock { $0.connectedLink?.identifier } }
    /// The ATT MTU negotiated with the connected peripheral.
    public var attMTU: Int? { state.withLock { $0.connectedLink?.mtu } }
    /// The longest value one write of `type` can carry on the current connection: MTU - 3
    /// bytes without response, 512 with response. `nil` when not connected.
    public func maximumWriteValueLength(for type: WriteType) -> Int? {
        state.withLock { $0.connectedLink?.maximumWriteValueLength(for: type) }
    }

    /// Kept for source compatibility with Bluejay on iOS; used when `connect` is given none.
    public var defaultWarningOptions: WarningOptions {
        get { state.withLock { $0.defaultWarningOptions } }
        set { state.withLock { $0.defaultWarningOptions = newValue } }
    }

    /// When `true`, listen callbacks also receive the errors that concern every listen: a
    /// disconnection (``BluejayError/disconnected(_:reason:)``) and
    /// ``cancelEverything(shouldDisconnect:)`` (``BluejayError/cancelled``). The listens
    /// themselves go on (they are re-enabled after an auto-reconnect). `false` by default,
    /// as in Bluejay. Listens of background tasks always receive them.
    public var broadcastErrorsToListeners: Bool {
        get { state.withLock { $0.broadcastErrorsToListeners } }
        set { state.withLock { $0.broadcastErrorsToListeners = newValue } }
    }

    /// The host Bluejay runs on, once started.
    public var host: LEHost? { state.withLock { $0.backend as? LEHost } }

    // MARK: Observers

    /// Adds a connection observer (held weakly) and tells it the current state at once.
    public func register(connectionObserver: any ConnectionObserver) {
        let (queue, available, connected) = state.withLock { state in
            state.connectionObservers.add(connectionObserver)
            return (state.callbackQueue, state.isBluetoothAvailable, state.connectedLink?.identifier)
        }
        queue.async {
            connectionObserver.bluetoothAvailable(available)
            if let connected { connectionObserver.connected(to: connected) }
        }
    }

    public func unregister(connectionObserver: any ConnectionObserver) {
        state.withLock { $0.connectionObservers.remove(connectionObserver) }
    }

    /// Adds a service observer (held weakly).
    public func register(serviceObserver: any ServiceObserver) {
        state.withLock { $0.serviceObservers.add(serviceObserver) }
    }

    public func unregister(serviceObserver: any ServiceObserver) {
        state.withLock { $0.serviceObservers.remove(serviceObserver) }
    }

    /// Adds an RSSI observer (held weakly).
    public func register(rssiObserver: any RSSIObserver) {
        state.withLock { $0.rssiObservers.add(rssiObserver) }
    }

    public func unregister(rssiObserver: any RSSIObserver) {
        state.withLock { $0.rssiObservers.remove(rssiObserver) }
    }

    /// Adds a log observer (held weakly).
    public func register(logObserver: any LogObserver) {
        state.withLock { $0.logObservers.add(logObserver) }
    }

    public func unregister(logObserver: any LogObserver) {
        state.withLock { $0.logObservers.remove(logObserver) }
    }

    /// Sets the one disconnect handler (held weakly), replacing the previous one.
    public func registerDisconnectHandler(handler: any DisconnectHandler) {
        state.withLock { state in
            state.disconnectHandler = WeakObservers()
            state.disconnectHandler.add(handler)
        }
    }

    /// Removes the disconnect handler.
    public func unregisterDisconnectHandler() {
        state.withLock { $0.disconnectHandler = WeakObservers() }
    }

    // MARK: Internals shared by the extensions

    /// Logs to swift-log and to the log observers.
    func log(_ level: Logger.Level, _ message: String) {
        logger.log(level: level, "\(message)")
        let (queue, observers) = state.withLock { ($0.callbackQueue, $0.logObservers.live()) }
        guard !observers.isEmpty else { return }
        queue.async { observers.forEach { $0.debug(message) } }
    }

    /// Runs `work` on the callback queue.
    func onCallbackQueue(_ work: @escaping @Sendable () -> Void) {
        state.withLock { $0.callbackQueue }.async(execute: work)
    }

    /// Tells the `async` event streams.
    func broadcast(_ event: ConnectionEvent) {
        connectionEventListeners.yield(event)
    }

    /// Why a regular API call cannot be made now, if it cannot.
    func refusal(for call: String) -> BluejayError? {
        state.withLock { state in
            guard state.lifecycle == .running else { return .notStarted }
            guard let background = state.background else { return nil }
            if let thread = background.thread, pthread_equal(thread, pthread_self()) != 0 {
                return .regularAPIInBackgroundTask(call)
            }
            return .backgroundTaskRunning
        }
    }

    /// The backend (our host or BlueZ), or why there is none.
    func requireBackend() throws(BluejayError) -> any CentralBackend {
        try state.withLock { state throws(BluejayError) -> any CentralBackend in
            guard state.lifecycle == .running else { throw .notStarted }
            guard let backend = state.backend, state.isBluetoothAvailable else { throw .bluetoothUnavailable(state.unavailableReason) }
            return backend
        }
    }

    /// The connected link, or ``BluejayError/notConnected``.
    func requireLink() throws(BluejayError) -> PeripheralLink {
        try state.withLock { state throws(BluejayError) -> PeripheralLink in
            guard state.lifecycle == .running else { throw .stopped }
            guard let link = state.connectedLink else { throw .notConnected }
            return link
        }
    }

    /// The time limit of GATT operations.
    var operationTimeLimit: Duration? { state.withLock { $0.options.operationTimeout.duration } }

    /// A GATT operation's time limit: the call's own `timeout` (``Timeout/none``: none), else
    /// the operation time limit.
    private func timeLimit(_ timeout: Timeout?) -> Duration? {
        timeout.map(\.duration) ?? operationTimeLimit
    }

    /// The clock of Bluejay's timers (operation limits, scan durations and expiry, flush
    /// windows, reconnect delays): the host's, so that the whole stack keeps one time.
    var clock: BluetoothClock {
        state.withLock { $0.backend?.clock ?? $0.options.hostConfiguration.clock }
    }

    /// Queues a GATT operation on the connected link, with the operation time limit (or the
    /// call's own `timeout`), run in a task of its own. `deliver` gets the outcome once, on
    /// whatever thread; it hops queues itself.
    func submitGATT<T: Sendable>(_ name: String, privileged: Bool = false, atFront: Bool = false, id: UInt64? = nil,
                                 timeout: Timeout? = nil,
                                 work: @escaping @Sendable (PeripheralLink) async throws -> T,
                                 deliver: @escaping @Sendable (Result<T, BluejayError>) -> Void) {
        if !privileged, let refusal = refusal(for: name) {
            deliver(.failure(refusal))
            return
        }
        let body = gattOperation(name, timeout: timeout, work: work)
        runner.submit(QueuedOperation.make(id: id ?? runner.makeID(), name: name, kind: .gatt, work: body, deliver: deliver), atFront: atFront)
    }

    /// ``submitGATT(_:privileged:atFront:id:timeout:work:deliver:)`` for work that may begin
    /// without a task (the callback API's reads and writes with response): when its turn comes, `begin` starts it on the
    /// connected link within the operation's time limit and returns `false` when it cannot;
    /// `work` then runs in a task. What `begin`'s work leaves to run in a task keeps the
    /// operation's deadline.
    func submitGATT<T: Sendable>(_ name: String, timeout: Timeout? = nil,
                                 begin: @escaping @Sendable (PeripheralLink, RequestScope,
                                                             _ next: @escaping @Sendable (StartedProcedure<T>) -> Void) -> Bool,
                                 work: @escaping @Sendable (PeripheralLink) async throws -> T,
                                 deliver: @escaping @Sendable (Result<T, BluejayError>) -> Void) {
        if let refusal = refusal(for: name) {
            deliver(.failure(refusal))
            return
        }
        let limit = timeLimit(timeout)
        let start: @Sendable (AbortSignal, @escaping @Sendable (StartedProcedure<T>) -> Void) -> Bool = { [self] abort, next in
            // Without a link, the task-run work reports why.
            guard let link = try? requireLink() else { return false }
            let deadline = limit.map { (at: clock.now + $0, limit: $0) }
            return begin(link, RequestScope(deadline: deadline?.at, abort: abort)) { started in
                guard case let .unfinished(rest) = started else { return next(started) }
                next(.unfinished { try await withDeadline(deadline, operation: name) { try await rest() } })
            }
        }
        runner.submit(QueuedOperation.make(id: runner.makeID(), name: name, kind: .gatt, begin: start,
                                           work: gattOperation(name, timeout: timeout, work: work), deliver: deliver))
    }

    /// Queues a GATT operation on the connected link, with the operation time limit, and runs it
    /// in the calling task when its turn comes (the `async` API).
    func performGATT<T: Sendable>(_ name: String, timeout: Timeout? = nil,
                                  work: @escaping @Sendable (PeripheralLink) async throws -> T) async throws(BluejayError) -> T {
        if let refusal = refusal(for: name) { throw refusal }
        return try await runner.perform(name, kind: .gatt, work: gattOperation(name, timeout: timeout, work: work))
    }

    /// The work of a GATT operation: `work` on the link connected when it starts, within the
    /// call's `timeout` (``Timeout/none``: no limit), else the operation time limit.
    private func gattOperation<T: Sendable>(_ name: String, timeout: Timeout?,
                                            work: @escaping @Sendable (PeripheralLink) async throws -> T) -> @Sendable () async throws -> T {
        let limit = timeLimit(timeout)
        // A request made while connected that finds the link gone reports the disconnection,
        // whichever of the failing of the queue and its own start came first.
        let submittedOn = state.withLock { $0.connectedLink }
        return { [self] in
            let link: PeripheralLink
            do {
                link = try self.requireLink()
            } catch BluejayError.notConnected {
                guard let submittedOn else { throw BluejayError.notConnected }
                throw BluejayError.disconnected(submittedOn.identifier, reason: submittedOn.connection.disconnectReason)
            }
            return try await withTimeLimit(limit, clock: self.clock, operation: name) { try await work(link) }
        }
    }

    /// A `deliver` that calls `completion` on the callback queue.
    func onCallbackQueue<T: Sendable>(_ completion: @escaping @Sendable (Result<T, BluejayError>) -> Void) -> @Sendable (Result<T, BluejayError>) -> Void {
        let queue = state.withLock { $0.callbackQueue }
        return { result in queue.async { completion(result) } }
    }
}
