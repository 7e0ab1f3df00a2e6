import Dispatch
import Foundation
import Synchronization

/// One wait for Ctrl-C or SIGTERM: the signals are handled (not fatal) from `init` on, so a
/// command makes it before it says it is ready. Resumes once, whichever comes first (a
/// signal, a cancellation), then stops listening. `@unchecked`: the signal sources are set
/// once in `init` and dispatch sources may be cancelled from any thread; the rest is behind
/// the mutex.
final class TerminationSignal: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<String?, Never>?
        var outcome: String??
    }

    private let state = Mutex(State())
    private let sources: [any DispatchSourceSignal]

    init() {
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: .global()))
        }
        self.sources = sources
        for (source, name) in zip(sources, ["SIGINT", "SIGTERM"]) {
            source.setEventHandler { [weak self] in self?.finish(name) }
            source.resume()
        }
    }

    /// Returns the name of the signal that arrived, or `nil` when the waiting task was cancelled.
    func wait() async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                install(continuation)
            }
        } onCancel: {
            finish(nil)
        }
    }

    private func install(_ continuation: CheckedContinuation<String?, Never>) {
        let outcome = state.withLock { state -> String?? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let outcome { continuation.resume(returning: outcome) }
    }

    private func finish(_ name: String?) {
        let continuation = state.withLock { state -> CheckedContinuation<String?, Never>? in
            guard state.outcome == nil else { return nil }
            state.outcome = .some(name)
            defer { state.continuation = nil }
            return state.continuation
        }
        sources.forEach { $0.cancel() }
        continuation?.resume(returning: name)
    }
}
