import BluetoothCore
import BluetoothHost
import Synchronization

/// One scan while it runs: feeds the host's advertisements and the passing time to a
/// ``ScanTracker``, asks the app what to do after each report, and stops when told to.
final class ScanSession: Sendable {
    struct Request: Sendable {
        var tracker: ScanTracker.Configuration
        var duration: Duration?
        var serviceUUIDs: [BluetoothUUID]
    }

    /// A scan's `.connect` action, carried out by Bluejay once the scan has stopped.
    struct ConnectRequest: Sendable {
        var discovery: ScanDiscovery
        var timeout: Timeout
        var warningOptions: WarningOptions
        var completion: @Sendable (ConnectionResult) -> Void
    }

    private enum Input: Sendable {
        case advertisement(Advertisement)
        case tick
        case stop(BluejayError?)
        case ended(BluejayError?)
    }

    private struct State: Sendable {
        var stopRequest: BluejayError??
        var hasStarted = false
        var stopped: (@Sendable ([ScanDiscovery], BluejayError?) -> Void)?
    }

    let operationID: UInt64
    let request: Request
    private let decide: @Sendable (ScanEvent, [ScanDiscovery]) async -> ScanAction
    private let state: Mutex<State>
    private let inputs: AsyncStream<Input>.Continuation
    private let stream: AsyncStream<Input>
    /// How often expiry, held discoveries and the duration are checked.
    static let tickInterval: Duration = .milliseconds(100)

    init(operationID: UInt64, request: Request,
         decide: @escaping @Sendable (ScanEvent, [ScanDiscovery]) async -> ScanAction,
         stopped: @escaping @Sendable ([ScanDiscovery], BluejayError?) -> Void) {
        self.operationID = operationID
        self.request = request
        self.decide = decide
        state = Mutex(State(stopped: stopped))
        (stream, inputs) = AsyncStream.makeStream(of: Input.self, bufferingPolicy: .unbounded)
    }

    /// Asks the scan to stop; `error` is what `stopped` reports (`nil`: stopped on purpose).
    /// Returns `false` when the scan has not started running (the caller cancels its operation).
    @discardableResult
    func requestStop(error: BluejayError?) -> Bool {
        let started = state.withLock { state -> Bool in
            if state.stopRequest == nil { state.stopRequest = .some(error) }
            return state.hasStarted
        }
        inputs.yield(.stop(error))
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
    func run(host: LEHost) async -> (discoveries: [ScanDiscovery], error: BluejayError?, connect: ConnectRequest?) {
        let alreadyStopped = state.withLock { state -> BluejayError?? in
            state.hasStarted = true
            return state.stopRequest
        }
        if let alreadyStopped { return ([], alreadyStopped, nil) }
        var tracker = ScanTracker(configuration: request.tracker)
        let advertisements: AsyncThrowingStream<Advertisement, any Error>
        do {
            advertisements = try await host.scan(ScanOptions(
                active: request.tracker.active, filterDuplicates: !request.tracker.allowDuplicates, serviceUUIDs: request.serviceUUIDs))
        } catch {
            return ([], BluejayError(error, operation: "starting the scan"), nil)
        }
        let inputs = self.inputs
        let pump = Task {
            do {
                for try await advertisement in advertisements { inputs.yield(.advertisement(advertisement)) }
                inputs.yield(.ended(nil))
            } catch {
                inputs.yield(.ended(BluejayError(error, operation: "scanning")))
            }
        }
        let clock = host.configuration.clock
        let ticker = Task {
            // Every tick interval from the start: a late wake-up does not shift the next ones.
            var next = clock.now + Self.tickInterval
            while (try? await clock.sleep(until: next)) != nil {
                inputs.yield(.tick)
                next = next + Self.tickInterval
            }
        }
        defer {
            pump.cancel()
            ticker.cancel()
        }
        let deadline = request.duration.map { clock.now + $0 }
        var ending: (error: BluejayError?, connect: ConnectRequest?)?

        loop: for await input in stream {
            var events: [ScanEvent] = []
            switch input {
            case let .advertisement(advertisement):
                if let discovery = tracker.receive(advertisement, at: clock.now) { events.append(.discovered(discovery)) }
            case .tick:
                for event in tracker.tick(at: clock.now) {
                    switch event {
                    case let .discovered(discovery): events.append(.discovered(discovery))
                    case let .expired(discovery): events.append(.expired(discovery))
                    }
                }
                if let deadline, clock.now >= deadline { ending = (nil, nil) }
            case let .stop(error):
                ending = (error, nil)
            case let .ended(error):
                ending = (error, nil)
            }
            for event in events where ending == nil {
                // With duplicates off, expiry is never reported (Bluejay's rule).
                let action = await decide(event, tracker.discoveries)
                switch action {
                case .continue:
                    break
                case .blacklist:
                    tracker.blacklist(event.discovery.peripheralIdentifier)
                case .stop:
                    ending = (nil, nil)
                case let .connect(discovery, timeout, warnings, completion):
                    ending = (nil, ConnectRequest(discovery: discovery, timeout: timeout, warningOptions: warnings, completion: completion))
                }
            }
            if ending != nil { break loop }
        }
        await host.stopScanning()
        return (tracker.discoveries, ending?.error, ending?.connect)
    }
}
