import Foundation
import Synchronization
import Testing

/// Why a test gave up waiting.
struct WaitTimeout: Error, CustomStringConvertible {
    var what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Waits for a callback to deliver one value, at most `timeout`.
func callback<T: Sendable>(timeout: Duration = .seconds(30), _ what: String = "a callback",
                           _ body: (@escaping @Sendable (T) -> Void) -> Void) async throws -> T {
    let once = Once<T>()
    body { once.deliver($0) }
    guard let value = await once.value(timeout: timeout) else { throw WaitTimeout(what: what) }
    return value
}

/// Checks `condition` until it holds, at most `timeout`.
func waitUntil(_ what: String, timeout: Duration = .seconds(30), _ condition: @Sendable () async -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !(await condition()) {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(what: what) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// The first value delivered, to one waiter, with a timeout.
final class Once<T: Sendable>: Sendable {
    private struct State {
        var value: T?
        var continuation: CheckedContinuation<T?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    func deliver(_ value: T) {
        let continuation = state.withLock { state -> CheckedContinuation<T?, Never>? in
            guard !state.finished, state.value == nil else { return nil }
            state.value = value
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: value)
    }

    func value(timeout: Duration) async -> T? {
        let timer = Task { [weak self] in
            do { try await Task.sleep(for: timeout) } catch { return }
            self?.expire()
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> T?? in
                if let value = state.value { return .some(value) }
                if state.finished { return .some(nil) }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func expire() {
        let continuation = state.withLock { state -> CheckedContinuation<T?, Never>? in
            state.finished = true
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(returning: nil)
    }
}

/// Values collected from callbacks.
final class Collected<T: Sendable>: Sendable {
    private let values = Mutex<[T]>([])
    func append(_ value: T) { values.withLock { $0.append(value) } }
    var all: [T] { values.withLock { $0 } }
    var count: Int { values.withLock { $0.count } }
}
