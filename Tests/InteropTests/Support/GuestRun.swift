import Foundation

/// A command running in the Linux guest while the test drives the rig. The rig's events it
/// causes are awaited against its end: a command that fails before it gets there ends the
/// wait at once, with its output, rather than leaving the test to its time limit with no word
/// of why (as a BlueZ test's app did on CI on 2026-11-29).
struct GuestRun: Sendable {
    let command: String
    private let bench: GuestBench
    private let task: Task<CLIResult, any Error>

    /// Starts `command` (``LinuxGuest/run(_:environment:timeout:)``, whose `timeout` ends it).
    init(_ command: String, on bench: GuestBench, timeout: Duration) {
        self.command = command
        self.bench = bench
        let guest = bench.guest
        task = Task { try await guest.run(command, timeout: timeout) }
    }

    /// The command's result, once it has ended.
    var result: CLIResult {
        get async throws { try await task.value }
    }

    /// The first rig event named `name` that matches `predicate` (``BumbleRig/waitForEvent(named:matching:timeout:)``),
    /// unless the command ends first or `timeout` passes: then an error with the command's
    /// output, the rig's last events and the tail of bluetoothd's log in the guest.
    @discardableResult
    func event(named name: String, matching predicate: @escaping @Sendable (RigEvent) -> Bool = { _ in true },
               timeout: Duration = .seconds(120)) async throws -> RigEvent {
        let (rig, task) = (bench.rig, task)
        // Whichever comes first, the wait's outcome or the command's end, wakes this task. Not a
        // task group: a group awaits all its children, and awaiting another task's value ignores
        // cancellation, so the group would last as long as the command.
        let (wakeUps, wake) = AsyncStream.makeStream(of: Void.self)
        let waiter = Task<Result<RigEvent, any Error>, Never> {
            defer { wake.yield() }
            do { return .success(try await rig.waitForEvent(named: name, matching: predicate, timeout: timeout)) } catch { return .failure(error) }
        }
        // Lasts until the command ends; it only wakes.
        Task {
            _ = try? await task.value
            wake.yield()
        }
        var wakeUp = wakeUps.makeAsyncIterator()
        _ = await wakeUp.next()
        wake.finish()
        waiter.cancel()
        switch await waiter.value {
        case let .success(event):
            return event
        case .failure(is CancellationError):
            // The command ended; the event may come just after (the rig's line and the guest's
            // answer travel apart).
            if let event = try? await rig.waitForEvent(named: name, matching: predicate, timeout: .seconds(1)) { return event }
            throw await failure("the command ended before the rig's event \"\(name)\"")
        case let .failure(error):
            throw await failure("\(error)")
        }
    }

    /// The rig's ``BumbleRig/request(_:timeout:)``, made while the command runs: a refusal
    /// comes with the command's output (see ``during(_:)``).
    @discardableResult
    func request(_ command: RigCommand, timeout: Duration = .seconds(30)) async throws -> RigEvent {
        try await during { try await bench.rig.request(command, timeout: timeout) }
    }

    /// Runs `body` (what the test does while the command runs: a rig request, say); if it
    /// throws, the error comes with the command's output, once the command has ended (its own
    /// `timeout` bounds that), so that the next test finds the guest free of it.
    func during<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as GuestRunFailure {
            throw error
        } catch {
            throw await failure("\(error)")
        }
    }

    private func failure(_ what: String) async -> GuestRunFailure {
        let output = await (try? task.value).map { "\($0)" } ?? "no result from the guest"
        let log = (try? await bench.guest.run("tail -n 30 /run/bluejay-guest/bluetoothd.log 2> /dev/null", timeout: .seconds(20)))?.stdout ?? ""
        return GuestRunFailure(message: "\(command): \(what)", context: "the command: \(output)\nbluetoothd's log (tail): \(log)\n\(bench.rig.diagnostics)")
    }
}

/// A failure while a ``GuestRun``'s command ran, with the command's output: passed on as it
/// is by an enclosing ``GuestRun/during(_:)``.
struct GuestRunFailure: Error, CustomStringConvertible {
    var message: String
    var context: String

    var description: String { "\(message)\n\(context)" }
}

extension GuestBench {
    /// Starts `command` in the guest; its events and result come from the ``GuestRun``.
    func start(_ command: String, timeout: Duration = .seconds(120)) -> GuestRun {
        GuestRun(command, on: self, timeout: timeout)
    }
}
