import Foundation
import Synchronization

/// The whole-run watchdog: a thread of its own (not a Swift task, so that a starved or
/// deadlocked cooperative pool cannot keep it from firing) that, unless ``disarm()`` is
/// called first, runs `fire` at the deadline and ends the process with exit status 2.
final class Watchdog: Sendable {
    /// Exit status of a run the watchdog ended.
    static let exitStatus: Int32 = 2

    private let disarmed = Atomic<Bool>(false)

    init(after limit: Duration, fire: @escaping @Sendable () -> Void) {
        let deadline = ContinuousClock.now + limit
        let thread = Thread { [self] in
            while ContinuousClock.now < deadline {
                if self.disarmed.load(ordering: .acquiring) { return }
                Thread.sleep(forTimeInterval: 0.25)
            }
            guard !self.disarmed.load(ordering: .acquiring) else { return }
            fire()
            exit(Self.exitStatus)
        }
        thread.name = "soak-watchdog"
        thread.start()
    }

    func disarm() {
        disarmed.store(true, ordering: .releasing)
    }
}
