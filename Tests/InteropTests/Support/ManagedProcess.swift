import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a child process of the interop tests (the Bumble rig, `bluejay`, a second test process)
/// failed. Every message of a ``ManagedProcess`` names its log file and ends with its last
/// output and the tail of that log, so a failing test says what the other side saw.
struct RigError: Error, CustomStringConvertible {
    var message: String
    var context: String

    var description: String { context.isEmpty ? message : "\(message)\n\(context)" }
}

/// What a ``ManagedProcess`` reads on its stdin.
enum ProcessInput: Sendable {
    /// A pipe, open until ``ManagedProcess/stop()``: commands go there, and its end tells
    /// the program to quit.
    case pipe
    /// `/dev/null`.
    case nullDevice
    /// A file's bytes, then end of file.
    case file(URL)
}

/// How ``ManagedProcess/stop()`` ends a process that still runs. First stdin is closed (after
/// the ``farewell`` line, if any); then each signal is sent if the process still runs
/// ``Signal/after`` the step before. The last signal is SIGKILL, and the process is always
/// waited for.
struct StopSequence: Sendable {
    struct Signal: Sendable {
        var number: Int32
        var after: Duration
    }

    /// Written on stdin before it is closed (`{"cmd":"quit"}`).
    var farewell: String?
    var signals: [Signal]

    /// How long a process gets to end by itself before the next step.
    static let gracePeriod: Duration = .seconds(3)

    /// `farewell` and end of stdin, then SIGTERM, then SIGKILL, each after a grace period.
    static func quit(_ farewell: String) -> StopSequence {
        StopSequence(farewell: farewell, signals: [Signal(number: SIGTERM, after: gracePeriod), Signal(number: SIGKILL, after: gracePeriod)])
    }

    /// SIGINT at once (as Ctrl-C), then SIGTERM, then SIGKILL, each after a grace period.
    static let interrupt = StopSequence(farewell: nil, signals: [
        Signal(number: SIGINT, after: .zero), Signal(number: SIGTERM, after: gracePeriod), Signal(number: SIGKILL, after: gracePeriod),
    ])

    /// SIGKILL at once: the process ends without any cleanup, as when the system kills an app.
    static let kill = StopSequence(farewell: nil, signals: [Signal(number: SIGKILL, after: .zero)])
}

/// Runs `body` (which starts a child process) with no signal blocked on this thread. A child
/// inherits the signal mask of the thread that spawns it, and Foundation's `Process` leaves it
/// as it is: started from a thread of the test process, whose runtime blocks most signals, a
/// child would not hear SIGTERM or SIGINT, and a shell in it would wait for ever for a child
/// that has exited (SIGCHLD blocked).
func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var none = sigset_t()
    var previous = sigset_t()
    sigemptyset(&none)
    pthread_sigmask(SIG_SETMASK, &none, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}

/// A child process of the interop tests: started with Foundation's `Process`, its stdout read
/// on a thread of its own into an ordered list of lines (parsed into `Line`s), its stderr in a
/// log file named in every failure message, and always stopped per its ``StopSequence`` (also
/// on deinit), never left running.
///
/// Waits look at the lines received so far first, then at those still to come; they end with
/// an error when the process exits first or after a timeout.
final class ManagedProcess<Line: Sendable & CustomStringConvertible>: Sendable {
    /// What failure messages call the process: "rig", "bluejay process".
    let name: String
    /// Its stderr.
    let logPath: String
    /// The program and its arguments, for messages.
    let commandLine: String
    private let process: Process
    private let output: LineBuffer<Line>
    private let stopping: StopSequence
    /// stdin while it is open; `nil` for `/dev/null` and once stopping began.
    private let input: Mutex<FileHandle?>
    private let stopped = Mutex(false)

    /// Starts `executable`.
    /// - Parameters:
    ///   - environment: changes to this process's environment (`nil` removes a variable).
    ///   - directory: its working directory (default: this process's).
    ///   - logName: the start of the log file's name, in the temporary directory.
    ///   - copiesOutputToLog: also writes stdout to the log file, for a program that logs on
    ///     stdout (Rootcanal): its lines are still parsed and waited for.
    ///   - parse: a stdout line as a `Line`; `nil` skips the line.
    static func launch(
        name: String,
        executable: URL,
        arguments: [String],
        environment: [String: String?] = [:],
        directory: URL? = nil,
        input: ProcessInput,
        stopping: StopSequence,
        logName: String,
        copiesOutputToLog: Bool = false,
        parse: @escaping @Sendable (String) -> Line?
    ) throws -> ManagedProcess {
        // Writing to the stdin of a process that died must fail with EPIPE, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        let commandLine = ([executable.path] + arguments).joined(separator: " ")
        let logPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("\(logName)-\(getpid())-\(UUID().uuidString.prefix(8)).log").path
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
              let log = FileHandle(forWritingAtPath: logPath) else {
            throw RigError(message: "Cannot create the \(name)'s log file \(logPath)", context: "")
        }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var variables = ProcessInfo.processInfo.environment
        for (key, value) in environment { variables[key] = value }
        process.environment = variables
        if let directory { process.currentDirectoryURL = directory }
        let inputPipe: Pipe?
        switch input {
        case .pipe:
            inputPipe = Pipe()
            process.standardInput = inputPipe
        case .nullDevice:
            inputPipe = nil
            process.standardInput = FileHandle.nullDevice
        case let .file(url):
            inputPipe = nil
            process.standardInput = try FileHandle(forReadingFrom: url)
        }
        let outputPipe = Pipe()
        process.standardOutput = outputPipe
        process.standardError = log
        do {
            try withSignalsUnblocked { try process.run() }
        } catch {
            throw RigError(message: "Cannot start \(commandLine): \(error)", context: "\(name) log: \(logPath)")
        }
        // The child's stderr shares this file description (and its offset), so stdout copied
        // here and stderr interleave without overwriting each other.
        let copy = copiesOutputToLog ? log : nil
        if !copiesOutputToLog { try? log.close() }
        let managed = ManagedProcess(name: name, logPath: logPath, commandLine: commandLine, process: process,
                                     input: inputPipe?.fileHandleForWriting, stopping: stopping, parse: parse)
        managed.output.startReading(outputPipe.fileHandleForReading, copyingTo: copy, threadName: "\(name) stdout")
        return managed
    }

    private init(name: String, logPath: String, commandLine: String, process: Process, input: FileHandle?, stopping: StopSequence,
                 parse: @escaping @Sendable (String) -> Line?) {
        self.name = name
        self.logPath = logPath
        self.commandLine = commandLine
        self.process = process
        self.input = Mutex(input)
        self.stopping = stopping
        output = LineBuffer(name: name, logPath: logPath, parse: parse)
    }

    deinit {
        stop()
    }

    /// The process, until ``stop()`` begins (`nil` from then on).
    var processIdentifier: Int32? { stopped.withLock { $0 } ? nil : process.processIdentifier }

    // MARK: Input

    /// Writes `line` and a newline on stdin.
    func writeLine(_ line: String) throws {
        guard let handle = input.withLock({ $0 }) else {
            throw RigError(message: "The \(name) is stopped; cannot send \(line)", context: context())
        }
        do {
            try handle.write(contentsOf: Data((line + "\n").utf8))
        } catch {
            throw RigError(message: "Cannot send \(line) to the \(name): \(error)", context: context())
        }
    }

    // MARK: Output

    /// Waits for the first line that matches and returns it. A consuming wait (the default)
    /// looks only at lines no earlier consuming wait returned, and takes the one it returns,
    /// so waiting N times for the same kind of line yields N lines in order. `predicate` runs
    /// under the buffer's lock: it must not call this object.
    func wait(
        for description: String,
        consuming: Bool = true,
        timeout: Duration,
        matching predicate: @escaping @Sendable (Line) -> Bool
    ) async throws -> Line {
        try await output.wait(description: description, consuming: consuming, matching: predicate, timeout: timeout)
    }

    /// Every line received so far, in order (also those a wait returned).
    var lines: [Line] { output.all() }

    /// Makes every line received so far that matches invisible to later consuming waits: a
    /// wait started after this returns only a line that comes after it.
    func discard(matching predicate: (Line) -> Bool) {
        output.discard(matching: predicate)
    }

    /// Whether stdout has ended (the process exited).
    var hasEnded: Bool { output.hasEnded }

    /// What the process wrote on stderr so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// The log path, the last lines and the tail of the log, as failure messages end.
    func context() -> String { output.context() }

    // MARK: Exit

    /// Sends signal `number` if the process still runs.
    func sendSignal(_ number: Int32) {
        if process.isRunning { kill(process.processIdentifier, number) }
    }

    /// Waits up to `timeout` for the process to exit, then for the rest of its output; its
    /// exit status, or `nil` if it still runs.
    func exitStatus(within timeout: Duration) async throws -> Int32? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(10))
        }
        let end = ContinuousClock.now.advanced(by: StopSequence.gracePeriod)
        while !output.hasEnded, ContinuousClock.now < end {
            try await Task.sleep(for: .milliseconds(10))
        }
        return process.terminationStatus
    }

    /// Stops the process per its ``StopSequence`` and waits for it to exit and for the end
    /// of its output. Idempotent. Blocks the calling thread (deinit uses it); async code
    /// should prefer ``shutdown()``.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        if let handle = input.withLock({ input in
            defer { input = nil }
            return input
        }) {
            if let farewell = stopping.farewell { try? handle.write(contentsOf: Data((farewell + "\n").utf8)) }
            try? handle.close()
        }
        process.end(escalating: stopping.signals.map { ($0.number, $0.after) })
        output.waitForEndOfOutput(timeout: StopSequence.gracePeriod)
    }

    /// ``stop()`` on a thread of its own, without blocking a thread of the cooperative pool
    /// while the process exits. Still stops the process when the task is cancelled.
    func shutdown() async {
        await onThreadOfItsOwn(named: "\(name) stop") { [self] in stop() }
    }
}

/// A process's stdout (or any stream: the Linux guest's agent socket) as an ordered list of
/// lines, read on a thread of its own, and the waits for them.
final class LineBuffer<Line: Sendable & CustomStringConvertible>: Sendable {
    private let name: String
    private let logPath: String
    private let parse: @Sendable (String) -> Line?
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct Waiter {
        var matches: @Sendable (Line) -> Bool
        var consumes: Bool
        var description: String
        var continuation: CheckedContinuation<Line, any Error>
        var timer: Task<Void, Never>?
    }

    private enum WaitOutcome {
        case found(Line), ended, cancelled, waiting
    }

    private struct State {
        var lines: [Line] = []
        var taken: [Bool] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var ended = false
    }

    init(name: String, logPath: String, parse: @escaping @Sendable (String) -> Line?) {
        self.name = name
        self.logPath = logPath
        self.parse = parse
    }

    /// Reads `handle` on a thread of its own until its end; with `copy`, also writes every
    /// byte read there (and closes it at the end).
    func startReading(_ handle: FileHandle, copyingTo copy: FileHandle? = nil, threadName: String) {
        let thread = Thread { [self] in
            self.read(handle, copyingTo: copy)
        }
        thread.name = threadName
        thread.start()
    }

    private func read(_ handle: FileHandle, copyingTo copy: FileHandle?) {
        let descriptor = handle.fileDescriptor
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                #if canImport(Glibc)
                Glibc.read(descriptor, raw.baseAddress, raw.count)
                #else
                Darwin.read(descriptor, raw.baseAddress, raw.count)
                #endif
            }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            try? copy?.write(contentsOf: buffer[0..<count])
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if let parsed = parse(line) { deliver(parsed) }
            }
        }
        // A last line without a newline.
        if !pending.isEmpty, let parsed = parse(String(decoding: pending, as: UTF8.self)) { deliver(parsed) }
        _ = handle // keeps the descriptor open until here
        try? copy?.close()
        end()
        finished.signal()
    }

    private func deliver(_ line: Line) {
        let resumed: [Waiter] = state.withLock { state in
            state.lines.append(line)
            state.taken.append(false)
            var resumed: [Waiter] = []
            for key in state.waiters.keys.sorted() {
                guard let waiter = state.waiters[key], waiter.matches(line) else { continue }
                if waiter.consumes {
                    guard !state.taken[state.taken.count - 1] else { continue }
                    state.taken[state.taken.count - 1] = true
                }
                state.waiters[key] = nil
                resumed.append(waiter)
            }
            return resumed
        }
        for waiter in resumed {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: line)
        }
    }

    private func end() {
        let waiters = state.withLock { state -> [Waiter] in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters.keys.sorted().compactMap { state.waiters[$0] }
        }
        let context = context()
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(throwing: RigError(
                message: "The \(name) exited while waiting for \(waiter.description)",
                context: context
            ))
        }
    }

    /// Whether stdout has ended (the process exited).
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Takes every line received so far that matches, so that no later consuming wait returns one.
    func discard(matching: (Line) -> Bool) {
        state.withLock { state in
            for index in state.lines.indices where matching(state.lines[index]) { state.taken[index] = true }
        }
    }

    func waitForEndOfOutput(timeout: Duration) {
        let seconds = timeout / .seconds(1)
        if finished.wait(timeout: .now() + seconds) == .success { finished.signal() }
    }

    func wait(
        description: String,
        consuming: Bool,
        matching: @escaping @Sendable (Line) -> Bool,
        timeout: Duration
    ) async throws -> Line {
        let key = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Line, any Error>) in
                let outcome: WaitOutcome = state.withLock { state in
                    for index in state.lines.indices where !(consuming && state.taken[index]) && matching(state.lines[index]) {
                        if consuming { state.taken[index] = true }
                        return .found(state.lines[index])
                    }
                    if state.ended { return .ended }
                    // Cancelled before it got here: its cancellation handler found nothing to end.
                    if Task.isCancelled { return .cancelled }
                    state.waiters[key] = Waiter(matches: matching, consumes: consuming, description: description, continuation: continuation)
                    return .waiting
                }
                switch outcome {
                case let .found(line):
                    continuation.resume(returning: line)
                case .ended:
                    continuation.resume(throwing: RigError(
                        message: "The \(name) has exited; no \(description) will come",
                        context: context()
                    ))
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .waiting:
                    let timer = Task { [self] in
                        try? await Task.sleep(for: timeout)
                        guard !Task.isCancelled else { return }
                        self.fail(key, with: RigError(message: "No \(description) from the \(name) within \(timeout)", context: self.context()))
                    }
                    let stillWaiting = state.withLock { state in
                        guard state.waiters[key] != nil else { return false }
                        state.waiters[key]?.timer = timer
                        return true
                    }
                    if !stillWaiting { timer.cancel() }
                }
            }
        } onCancel: {
            fail(key, with: CancellationError())
        }
    }

    private func fail(_ key: Int, with error: any Error) {
        let waiter = state.withLock { state -> Waiter? in
            defer { state.waiters[key] = nil }
            return state.waiters[key]
        }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    func all() -> [Line] {
        state.withLock { $0.lines }
    }

    /// The log path, the last lines and the tail of the log.
    func context() -> String {
        let recent = state.withLock { $0.lines.suffix(15) }
        var text = "\(name) log: \(logPath)\nlast \(name) output:\n"
        text += recent.isEmpty ? "  (none)\n" : recent.map { "  \($0)\n" }.joined()
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = log.split(separator: "\n", omittingEmptySubsequences: false).suffix(25)
        text += "\(name) log tail:\n" + (tail.isEmpty ? "  (empty)" : tail.map { "  \($0)" }.joined(separator: "\n"))
        return text
    }
}
