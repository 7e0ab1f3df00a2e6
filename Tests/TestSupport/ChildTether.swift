import Foundation

/// Keeps a long-lived child of the tests (QEMU, a private dbus-daemon) from outliving them.
///
/// The child runs under a small bash wrapper whose stdin is a pipe from the test process. The
/// wrapper starts the child (stdin from `/dev/null`) and waits for it; a watcher reads the pipe
/// and kills the child with SIGKILL when the pipe ends. The pipe ends when the test process
/// closes its side, and also when the kernel closes it because the tests died, however they
/// died (SIGKILL, a crash, a CI timeout): nothing is left running either way. SIGTERM to the
/// wrapper kills the child at once too (for when the pipe's end is late: another child of the
/// tests may hold a copy of its writing end). The wrapper exits with the child's status; the
/// child's stdout and stderr are the wrapper's.
public enum ChildTether {
    /// The wrapper's interpreter.
    public static let shell = URL(fileURLWithPath: "/bin/bash")

    /// The wrapper's arguments to run `executable` with `arguments`. Launch ``shell`` with them
    /// and a pipe as stdin; closing the pipe's writing end ends the child.
    public static func arguments(running executable: String, _ arguments: [String]) -> [String] {
        ["-c", script, executable] + arguments
    }

    private static let script = """
        exec 3<&0
        "$0" "$@" < /dev/null &
        child=$!
        trap 'kill -KILL "$child" 2> /dev/null; exit 143' TERM
        { read -r _ <&3; kill -KILL "$child"; } > /dev/null 2>&1 &
        watcher=$!
        wait "$child"
        status=$?
        kill "$watcher" 2> /dev/null
        exit $status
        """
}

extension Process {
    /// Waits until the process has exited or `timeout` has passed, looking every 10 ms; whether
    /// it exited. It blocks the calling thread: call it on a thread of its own, never on one of
    /// the cooperative pool (nor `waitUntilExit()`, which spins).
    public func waitForExit(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while isRunning {
            if ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    /// Ends the process unless it exits on its own: for each step, waits up to its grace period,
    /// then sends its signal; then waits for the exit, at most `reapLimit` (a process that
    /// outlives its last signal, SIGKILL, by that long is stuck in the kernel: it is left, and
    /// the caller goes on rather than hanging the run). Whether it exited without a signal.
    /// It blocks the calling thread, as ``waitForExit(timeout:)`` does.
    @discardableResult
    public func end(escalating steps: [(signal: Int32, after: Duration)], reapLimit: Duration = .seconds(10)) -> Bool {
        var signalled = false
        for step in steps {
            if waitForExit(timeout: step.after) { break }
            kill(processIdentifier, step.signal)
            signalled = true
        }
        if !waitForExit(timeout: reapLimit) {
            FileHandle.standardError.write(Data("process \(processIdentifier) still runs \(reapLimit) after its last signal; left\n".utf8))
        }
        return !signalled
    }
}

/// Runs `body` on a thread of its own and returns its result, without holding a thread of the
/// cooperative pool while it blocks (waiting for a process to exit, say: with two cores, two
/// such waits on the pool would stop every other test).
public func onThreadOfItsOwn<T: Sendable>(named name: String, _ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
        let thread = Thread { continuation.resume(returning: body()) }
        thread.name = name
        thread.start()
    }
}
