import Dispatch
import Synchronization

/// Runs `body` in a task and blocks the fuzzer's thread (libFuzzer's, never one of the
/// concurrency pool's) until it returns. A body that never returns is a hang: libFuzzer's
/// `-timeout` reports it with the input that caused it, as scripts/fuzz.sh runs every target.
public func fuzzAwait<T: Sendable>(_ body: @escaping @Sendable () async -> T) -> T {
    let box = ResultBox<T>()
    Task {
        box.set(await body())
    }
    return box.wait()
}

private final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    private let done = DispatchSemaphore(value: 0)

    func set(_ result: T) {
        value.withLock { $0 = result }
        done.signal()
    }

    func wait() -> T {
        done.wait()
        guard let result = value.withLock({ $0 }) else { fuzzFailure("a task ended without a result") }
        return result
    }
}
