import Foundation
import Glibc
import Synchronization

/// Now on CLOCK_MONOTONIC, in nanoseconds: the clock of the send times radio.py puts in each
/// streamed notification (Python's `time.monotonic_ns`), so that a value's latency is its
/// arrival minus its stamp, across the two processes.
func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

/// Checks the values of one stream of `count` numbered notifications (radio.py's
/// `STREAM_HEADER`: a 32-bit sequence number 0 ..< count, then the send time in ns, both little
/// endian), as bumble_central.py's `StreamCheck` does: each number must arrive once.
/// `lost`: numbers that never came; `duplicated`: numbers that came again; `outOfOrder`:
/// numbers that came after a higher one; `unexpected`: numbers past the stream (or values too
/// short to hold one); `wrongSize`: values of another size; `streamErrors`: errors the listen
/// reported. Latency: arrival minus stamp, per value (first arrivals only).
///
/// Called from whatever thread the API delivers on (the callback queue, the stream's consumer);
/// the state is behind a lock, uncontended.
final class StreamCheck: Sendable {
    struct State {
        var seen: [Bool]
        var received = 0
        var unique = 0
        var duplicated = 0
        var outOfOrder = 0
        var unexpected = 0
        var wrongSize = 0
        var streamErrors: [String] = []
        var highest = -1
        var latencies: [Int64] = []
        /// When the last missing value arrived (the end of the measured span).
        var end: Snapshot?
    }

    static let headerSize = 12

    let count: Int
    let size: Int
    private let state: Mutex<State>
    /// Yields once, when every number has arrived.
    let completed: AsyncStream<Void>
    private let completion: AsyncStream<Void>.Continuation

    init(count: Int, size: Int) {
        self.count = count
        self.size = size
        var initial = State(seen: [Bool](repeating: false, count: count))
        initial.latencies.reserveCapacity(count)
        state = Mutex(initial)
        (completed, completion) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func receive(_ value: Data) {
        let now = monotonicNanoseconds()
        let header: (sequence: UInt32, sent: Int64)? = value.count < Self.headerSize ? nil : value.withUnsafeBytes { bytes in
            (UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt32.self)),
             Int64(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: Int64.self)))
        }
        let done = state.withLock { state -> Bool in
            state.received += 1
            if value.count != size { state.wrongSize += 1 }
            guard let header, Int(header.sequence) < count else {
                state.unexpected += 1
                return false
            }
            let sequence = Int(header.sequence)
            guard !state.seen[sequence] else {
                state.duplicated += 1
                return false
            }
            state.seen[sequence] = true
            state.unique += 1
            state.latencies.append(now - header.sent)
            if sequence < state.highest { state.outOfOrder += 1 } else { state.highest = sequence }
            guard state.unique == count else { return false }
            state.end = Snapshot.now()
            return true
        }
        if done {
            completion.yield()
            completion.finish()
        }
    }

    /// The listen reported an error instead of a value.
    func streamError(_ error: any Error) {
        state.withLock { $0.streamErrors.append("\(error)") }
    }

    /// Waits until every number has arrived, at most `timeout`; whether they all did.
    func waitUntilComplete(timeout: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { [completed] in
                for await _ in completed { return true }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    var end: Snapshot? { state.withLock { $0.end } }

    /// p50, p90 and p99 of the latencies, in microseconds.
    var latencyPercentiles: [Double]? {
        let latencies = state.withLock { $0.latencies }
        guard !latencies.isEmpty else { return nil }
        return percentiles(latencies.map { Duration.nanoseconds($0) })
    }

    /// The counts, with what the radio says it notified and delivered (its `streamed` answer).
    func report(streamed: [String: Any]) -> [String: Any] {
        let (received, unique, duplicated, outOfOrder, unexpected, wrongSize, errors) = state.withLock { state in
            (state.received, state.unique, state.duplicated, state.outOfOrder, state.unexpected, state.wrongSize, state.streamErrors)
        }
        return ["requested": count, "notified": streamed["notified"] ?? NSNull(), "delivered": streamed["delivered"] ?? NSNull(),
                "received": received, "lost": count - unique, "duplicated": duplicated, "out_of_order": outOfOrder,
                "unexpected": unexpected, "wrong_size": wrongSize, "stream_errors": errors.count, "first_stream_error": errors.first ?? NSNull()]
    }

    /// Whether a report says the stream arrived whole: every value the radio was asked for was
    /// delivered by the central's controller and received once, in order, and nothing else.
    static func passed(_ report: [String: Any]) -> Bool {
        let requested = report["requested"] as? Int
        return requested != nil && report["delivered"] as? Int == requested && report["received"] as? Int == requested
            && ["lost", "duplicated", "out_of_order", "unexpected", "wrong_size", "stream_errors"].allSatisfy { report[$0] as? Int == 0 }
    }
}
