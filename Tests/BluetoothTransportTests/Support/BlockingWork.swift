import BluetoothTransport
import Foundation
import Synchronization

/// Runs blocking work (a send that waits for buffer space, a close that joins a thread) on
/// a thread of its own, so it never ties up the small cooperative pool, and fails the test
/// if the work is still blocked after `timeout` instead of hanging it.
func onNewThread<T: Sendable>(
    timeout: Duration = .seconds(10),
    _ work: @escaping @Sendable () throws -> T
) async throws -> T {
    let once = Mutex<CheckedContinuation<T, any Error>?>(nil)
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        once.withLock { $0 = continuation }
        let resume: @Sendable (Result<T, any Error>) -> Void = { result in
            once.withLock { stored in
                defer { stored = nil }
                return stored
            }?.resume(with: result)
        }
        let timer = Task {
            try await Task.sleep(for: timeout)
            resume(.failure(TestFailure("blocking work still running after \(timeout)")))
        }
        Thread {
            resume(Result { try work() })
            timer.cancel()
        }.start()
    }
}

extension HCITransport {
    /// Test cleanup: closes on a thread of its own, so a close() that never returns fails the
    /// tests that check closing (through ``closeWithTimeout(_:)``) instead of hanging the run.
    func closeInBackground() {
        Thread { self.close() }.start()
    }

    /// close(), failing the test if it has not returned after `timeout`.
    func closeWithTimeout(_ timeout: Duration = .seconds(10)) async throws {
        try await onNewThread(timeout: timeout) { self.close() }
    }
}
