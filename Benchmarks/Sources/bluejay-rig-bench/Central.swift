import Bluejay
import Foundation
import Synchronization

/// What the workloads need of a central, written once with each of Bluejay's APIs.
protocol Central: Sendable {
    func connect(_ peer: PeripheralIdentifier) async throws
    /// Listens to the notifying characteristic, every value and error to `check`; returns once
    /// the peer has the subscription.
    func listen(_ check: StreamCheck) async throws
    /// Ends the listen; returns once no value can reach the check any more.
    func endListen() async throws
    /// `count` sequential reads of the readable characteristic, each started when the previous
    /// one returned: the latency of each, the span from just before the first to just after the
    /// last, and the last value.
    func reads(_ count: Int) async throws -> (latencies: [Duration], start: Snapshot, end: Snapshot, last: Data)
    /// Scans with duplicates until `reports` advertising reports: the span from just before the
    /// scan starts to the last report, and how many were reported.
    func scan(reports: Int) async throws -> (start: Snapshot, end: Snapshot, received: Int)
    func disconnect() async throws
}

/// The central written with the `async` API.
final class AsyncCentral: Central {
    let bluejay: Bluejay
    private let consumer = Mutex<Task<Void, Never>?>(nil)

    init(_ bluejay: Bluejay) {
        self.bluejay = bluejay
    }

    func connect(_ peer: PeripheralIdentifier) async throws {
        try await bluejay.connect(peer, timeout: .seconds(15))
    }

    func listen(_ check: StreamCheck) async throws {
        let values: ValueStream<Data> = try await bluejay.listen(to: notifying)
        let task = Task {
            do {
                for try await value in values { check.receive(value) }
            } catch {
                check.streamError(error)
            }
        }
        consumer.withLock { $0 = task }
    }

    func endListen() async throws {
        try await bluejay.endListen(to: notifying)
        // Ending the listen finishes its stream: the consumer has taken the last value.
        await consumer.withLock { $0 }?.value
    }

    func reads(_ count: Int) async throws -> (latencies: [Duration], start: Snapshot, end: Snapshot, last: Data) {
        var latencies: [Duration] = []
        latencies.reserveCapacity(count)
        var value = Data()
        let start = Snapshot.now()
        for _ in 0..<count {
            let began = clock.now
            value = try await bluejay.read(from: readable)
            latencies.append(began.duration(to: clock.now))
        }
        return (latencies, start, Snapshot.now(), value)
    }

    func scan(reports: Int) async throws -> (start: Snapshot, end: Snapshot, received: Int) {
        let start = Snapshot.now()
        // Every advertising report, as Bumble's filter_duplicates=False gives them (the virtual
        // radio's RSSI is always -50, so any RSSI throttle above 0 would report each advertiser once).
        var received = 0
        for try await event in bluejay.scan(allowDuplicates: true, throttleRSSIDelta: 0) {
            guard case .discovered = event else { continue }
            received += 1
            if received == reports { break }  // ends the iteration, which stops the scan
        }
        return (start, Snapshot.now(), received)
    }

    func disconnect() async throws {
        try await bluejay.disconnect()
    }
}

/// The central written with the callback API of the seed READMEs: every call takes a
/// completion, which Bluejay calls on its callback queue, and the next request of a sequence is
/// made from the previous one's completion, as such an app does. The `async` wrappers here only
/// let the driver wait for the end of a sequence.
final class CallbackCentral: Central {
    let bluejay: Bluejay

    init(_ bluejay: Bluejay) {
        self.bluejay = bluejay
    }

    func connect(_ peer: PeripheralIdentifier) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            bluejay.connect(peer, timeout: .seconds(15)) { result in continuation.resume(with: result.map { _ in () }) }
        }
    }

    func listen(_ check: StreamCheck) async throws {
        bluejay.listen(to: notifying) { (result: ReadResult<Data>) in
            switch result {
            case let .success(value): check.receive(value)
            case let .failure(error): check.streamError(error)
            }
        }
        // Requests run in order: once a read queued after the listen returns, the listen is set
        // up (or its failure went to the callback, and so to the check).
        _ = try await read()
        guard bluejay.isListening(to: notifying) else { throw BluejayError.missingCharacteristic(notifying) }
    }

    func endListen() async throws {
        // Values the listen delivered before it ended are on the callback queue ahead of this
        // completion, so they have reached the check when it runs.
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            bluejay.endListen(to: notifying) { result in continuation.resume(with: result) }
        }
    }

    private func read() async throws -> Data {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            bluejay.read(from: readable) { (result: ReadResult<Data>) in continuation.resume(with: result) }
        }
    }

    func reads(_ count: Int) async throws -> (latencies: [Duration], start: Snapshot, end: Snapshot, last: Data) {
        try await withCheckedThrowingContinuation { continuation in
            CallbackReads(bluejay: bluejay, count: count, continuation: continuation).start()
        }
    }

    func scan(reports: Int) async throws -> (start: Snapshot, end: Snapshot, received: Int) {
        let counted = Mutex<(received: Int, end: Snapshot?)>((0, nil))
        let start = Snapshot.now()
        let error: BluejayError? = await withCheckedContinuation { continuation in
            bluejay.scan(allowDuplicates: true, throttleRSSIDelta: 0, serviceIdentifiers: nil, discovery: { _, _ in
                counted.withLock { counted in
                    counted.received += 1
                    guard counted.received == reports else { return .continue }
                    counted.end = Snapshot.now()
                    return .stop
                }
            }, stopped: { _, error in continuation.resume(returning: error) })
        }
        if let error { throw error }
        let (received, end) = counted.withLock { $0 }
        return (start, end ?? Snapshot.now(), received)
    }

    func disconnect() async throws {
        let result = await withCheckedContinuation { continuation in
            bluejay.disconnect { result in continuation.resume(returning: result) }
        }
        if case let .failure(error) = result { throw error }
    }
}

/// Sequential callback reads: each completion records its latency and starts the next read.
private final class CallbackReads: Sendable {
    typealias Outcome = (latencies: [Duration], start: Snapshot, end: Snapshot, last: Data)

    private struct State {
        var latencies: [Duration] = []
        var began = clock.now
        var start: Snapshot?
    }

    private let bluejay: Bluejay
    private let count: Int
    private let continuation: CheckedContinuation<Outcome, any Error>
    private let state = Mutex(State())

    init(bluejay: Bluejay, count: Int, continuation: CheckedContinuation<Outcome, any Error>) {
        self.bluejay = bluejay
        self.count = count
        self.continuation = continuation
        state.withLock { $0.latencies.reserveCapacity(count) }
    }

    func start() {
        state.withLock { $0.start = Snapshot.now() }
        next()
    }

    private func next() {
        state.withLock { $0.began = clock.now }
        bluejay.read(from: readable) { [self] (result: ReadResult<Data>) in
            let now = clock.now
            switch result {
            case let .failure(error):
                continuation.resume(throwing: error)
            case let .success(value):
                let done = state.withLock { state -> Outcome? in
                    state.latencies.append(state.began.duration(to: now))
                    guard state.latencies.count == count, let start = state.start else { return nil }
                    return (state.latencies, start, Snapshot.now(), value)
                }
                if let done { continuation.resume(returning: done) } else { next() }
            }
        }
    }
}
