import BluetoothCore
import BluetoothHost
import Dispatch
import Synchronization

/// One scan while it runs: feeds the host's advertisements and the passing time to a
/// ``ScanTracker``, asks the app what to do after each report, and stops when told to.
///
/// The tracker runs where the app hears: on the callback queue for the callback API (the
/// host's advertisements hop there once per transport batch, and each discovery callback's
/// action applies before the next report), or inline on the transport's reader thread for
/// the `async` API (a batch's events go into its stream at once; the stream never blocks).
/// The operation's task only waits for the end.
final class ScanSession: Sendable {
    /// How the app hears of the scan's events.
    enum Reporting: Sendable {
        /// The app's callbacks decide what to do after each event, on `queue`.
        case callbacks(queue: DispatchQueue, decide: @Sendable (ScanEvent, [ScanDiscovery]) -> ScanAction)
        /// The events go into a stream, a batch at a time; a consumer that is gone stops the scan.
        case stream(ValueStream<ScanEvent>.Continuation)
    }

    struct Request: Sendable {
        var tracker: ScanTracker.Configuration
        var duration: Duration?
        var serviceUUIDs: [BluetoothUUID]
        /// Fail with ``BluejayError/scanTimeout(after:)`` when nothing is discovered within it.
        var timeout: Duration?
        /// End (without an error) when a connection is requested.
        var endsWhenConnecting = false
    }

    /// A scan's `.connect` action, carried out by Bluejay once the scan has stopped.
    struct ConnectRequest: Sendable {
        var discovery: ScanDiscovery
        var timeout: Timeout
        var warningOptions: WarningOptions
        var completion: @Sendable (ConnectionResult) -> Void
    }

    /// How and why the scan ends: an error unless stopped on purpose, and the `.connect`
    /// request if the app made one.
    private struct Ending: Sendable {
        var error: BluejayError?
        var connect: ConnectRequest?
    }

    private struct State: Sendable {
        var stopRequest: BluejayError??
        var hasStarted = false
        var stopped: (@Sendable ([ScanDiscovery], BluejayError?) -> Void)?
        var tracker: ScanTracker
        var deadline: BluetoothClock.Instant?
        /// When the scan fails unless something was discovered (``Request/timeout``).
        var discoveryDeadline: BluetoothClock.Instant?
        /// Something was discovered (the scan timeout no longer applies).
        var hasDiscovered = false
        /// Set once; nothing is reported after it.
        var ending: Ending?
        var endWaiter: CheckedContinuation<Void, Never>?
    }

    let operationID: UInt64
    let request: Request
    private let reporting: Reporting
    private let state: Mutex<State>
    /// How often expiry, held discoveries and the duration are checked.
    static let tickInterval: Duration = .milliseconds(100)

    init(operationID: UInt64, request: Request, reporting: Reporting, stopped: @escaping @Sendable ([ScanDiscovery], BluejayError?) -> Void) {
        self.operationID = operationID
        self.request = request
        self.reporting = reporting
        state = Mutex(State(stopped: stopped, tracker: ScanTracker(configuration: request.tracker)))
    }

    /// Asks the scan to stop; `error` is what `stopped` reports (`nil`: stopped on purpose).
    /// Returns `false` when the scan has not started running (the caller cancels its operation).
    @discardableResult
    func requestStop(error: BluejayError?) -> Bool {
        let started = state.withLock { state -> Bool in
            if state.stopRequest == nil { state.stopRequest = .some(error) }
            return state.hasStarted
        }
        end(Ending(error: error))
        return started
    }

    /// Reports the end once: `stopped(discoveries, error)`. A stop requested earlier decides
    /// the error (`nil` for ``Bluejay/stopScanning()``).
    func finish(discoveries: [ScanDiscovery], error: BluejayError?) {
        let (stopped, requested) = state.withLock { state in
            defer { state.stopped = nil }
            return (state.stopped, state.stopRequest)
        }
        let reported: BluejayError?
        if let requested { reported = requested } else { reported = error }
        stopped?(discoveries, reported)
    }

    /// Scans until stopped; returns the discoveries and why it ended, and the `.connect`
    /// request if the app asked for one.
    func run(backend: any CentralBackend) async -> (discoveries: [ScanDiscovery], error: BluejayError?, connect: ConnectRequest?) {
        let clock = backend.clock
        let alreadyStopped = state.withLock { state -> BluejayError?? in
            state.hasStarted = true
            state.deadline = request.duration.map { clock.now + $0 }
            state.discoveryDeadline = request.timeout.map { clock.now + $0 }
            return state.stopRequest
        }
        if let alreadyStopped { return ([], alreadyStopped, nil) }
        do {
            var options = ScanOptions(active: request.tracker.active, filterDuplicates: !request.tracker.allowDuplicates,
                                      serviceUUIDs: request.serviceUUIDs)
            options.peerLimit = request.tracker.peripheralLimit
            try await backend.startScanning(options, handler: { [self] advertisements in
                deliver { self.receive(advertisements, at: clock.now) }
            }, onEnd: { [self] error in
                end(Ending(error: error.map { BluejayError($0, operation: "scanning") }))
            })
        } catch {
            return ([], BluejayError(error, operation: "starting the scan"), nil)
        }
        let ticker = Task { [self] in
            // Every tick interval from the start: a late wake-up does not shift the next ones.
            var next = clock.now + Self.tickInterval
            while (try? await clock.sleep(until: next)) != nil {
                deliver { self.tick(at: clock.now) }
                next = next + Self.tickInterval
            }
        }
        // The operation failed from outside (cancelEverything, stop) cancels this task.
        let ending = await withTaskCancellationHandler {
            await waitForEnding()
        } onCancel: {
            end(Ending(error: .cancelled))
        }
        ticker.cancel()
        await backend.stopScanning()
        return (state.withLock { $0.tracker.discoveries }, ending.error, ending.connect)
    }

    /// What the scan forgot past ``Bluejay/scanPeripheralLimit``, for the log: `nil` if nothing.
    var forgottenSummary: String? {
        let forgotten = state.withLock { $0.tracker.forgotten }
        guard forgotten.tracked + forgotten.blacklisted > 0 else { return nil }
        return "the scan heard more than \(request.tracker.peripheralLimit) peripherals: \(forgotten.tracked) tracked and "
            + "\(forgotten.blacklisted) blacklisted were forgotten, least recently heard first"
    }

    // MARK: Reports and time (on the delivery queue, or where they arrive)

    private func receive(_ advertisements: [Advertisement], at now: BluetoothClock.Instant) {
        switch reporting {
        case let .stream(continuation):
            // The whole batch under one lock, into the stream at once.
            let events = state.withLock { state -> [ScanEvent] in
                guard state.ending == nil else { return [] }
                var events: [ScanEvent] = []
                for advertisement in advertisements { state.tracker.receive(advertisement, at: now, into: &events) }
                if !events.isEmpty { state.hasDiscovered = true }
                return events
            }
            publish(events, to: continuation)
        case let .callbacks(_, decide):
            for advertisement in advertisements {
                let events = state.withLock { state -> [ScanEvent] in
                    guard state.ending == nil else { return [] }
                    var events: [ScanEvent] = []
                    state.tracker.receive(advertisement, at: now, into: &events)
                    if !events.isEmpty { state.hasDiscovered = true }
                    return events
                }
                for event in events { ask(decide, about: event) }
            }
        }
    }

    private func tick(at now: BluetoothClock.Instant) {
        let (events, pastDeadline, timedOut) = state.withLock { state -> ([ScanEvent], Bool, Bool) in
            guard state.ending == nil else { return ([], false, false) }
            let timedOut = !state.hasDiscovered && (state.discoveryDeadline.map { now >= $0 } ?? false)
            return (state.tracker.tick(at: now), state.deadline.map { now >= $0 } ?? false, timedOut)
        }
        if timedOut, let timeout = request.timeout {
            end(Ending(error: .scanTimeout(after: timeout)))
            return
        }
        switch reporting {
        case let .stream(continuation):
            publish(events, to: continuation)
        case let .callbacks(_, decide):
            for event in events { ask(decide, about: event) }
        }
        if pastDeadline { end(Ending()) }
    }

    private func publish(_ events: [ScanEvent], to continuation: ValueStream<ScanEvent>.Continuation) {
        guard !events.isEmpty else { return }
        if continuation.yield(contentsOf: events) == .terminated { end(Ending()) }
    }

    /// Asks the app about one event and applies its answer before the next event.
    private func ask(_ decide: @Sendable (ScanEvent, [ScanDiscovery]) -> ScanAction, about event: ScanEvent) {
        guard let discoveries = state.withLock({ $0.ending == nil ? $0.tracker.discoveries : nil }) else { return }
        switch decide(event, discoveries) {
        case .continue:
            break
        case .blacklist:
            state.withLock { $0.tracker.blacklist(event.discovery.peripheralIdentifier) }
        case .stop:
            end(Ending())
        case let .connect(discovery, timeout, warnings, completion):
            end(Ending(connect: ConnectRequest(discovery: discovery, timeout: timeout, warningOptions: warnings, completion: completion)))
        }
    }

    /// Runs `work` where the app hears: on the callback queue, or right here.
    private func deliver(_ work: @escaping @Sendable () -> Void) {
        switch reporting {
        case let .callbacks(queue, _): queue.async(execute: work)
        case .stream: work()
        }
    }

    // MARK: The end

    /// Ends the scan, unless it has ended (the first ending counts).
    private func end(_ ending: Ending) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.ending == nil else { return nil }
            state.ending = ending
            defer { state.endWaiter = nil }
            return state.endWaiter
        }
        waiter?.resume()
    }

    private func waitForEnding() async -> Ending {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = state.withLock { state -> Bool in
                guard state.ending == nil else { return true }
                state.endWaiter = continuation
                return false
            }
            if ended { continuation.resume() }
        }
        return state.withLock { $0.ending } ?? Ending()
    }
}
