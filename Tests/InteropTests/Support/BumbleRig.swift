import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the Bumble peer does on its side of the link (`--role`).
enum RigRole: String, Sendable {
    /// Advertises the rig's GATT database; Bluejay's host is the central.
    case peripheral
    /// Scans and connects on command; Bluejay's host is the peripheral.
    case central
}

/// One advertising device of the rig, as its `ready` line describes it.
struct RigPeripheral: Sendable, Equatable {
    var index: Int
    var address: String
    var addressType: String
    var name: String
    var serial: String
}

/// Why the rig failed. Every message names the rig's log file and ends with the last events
/// and the tail of that log, so a failing test says what the peer saw.
struct RigError: Error, CustomStringConvertible {
    var message: String
    var context: String

    var description: String { context.isEmpty ? message : "\(message)\n\(context)" }
}

/// Runs `Tests/InteropTests/bumble/peer.py`: Bumble virtual controllers on one link, one of
/// them served to Bluejay's host over H4/TCP (``transportSpecification``), the others driven
/// by Bumble devices acting per ``RigRole``. Talks to it with JSON lines (see
/// `Tests/InteropTests/bumble/README.md`).
///
/// Use ``withBumbleRig(role:peripherals:arguments:readyTimeout:isolation:_:)``, which always
/// stops the peer. ``stop()`` (also run on deinit) never leaves the Python process running.
final class BumbleRig: Sendable {
    /// The peer's stderr (Python and Bumble logs). Named in every failure message.
    let logPath: String
    let role: RigRole
    private let events: RigEventStream
    private let control: Mutex<Control>

    private struct Control {
        var process: Process?
        var input: FileHandle?
        var ready: RigEvent?
        var nextID = 1
    }

    /// How long ``stop()`` gives the peer after `quit`, and again after SIGTERM.
    static let gracePeriod: Duration = .seconds(3)

    /// The directory of the package, found from this file's path.
    static func packageRoot(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath)
            .deletingLastPathComponent() // Support
            .deletingLastPathComponent() // InteropTests
            .deletingLastPathComponent() // Tests
            .deletingLastPathComponent()
    }

    /// `BLUEJAY_PYTHON`, else `<package root>/.venv/bin/python`.
    static func pythonPath() -> String {
        if let path = ProcessInfo.processInfo.environment["BLUEJAY_PYTHON"], !path.isEmpty { return path }
        return packageRoot().appendingPathComponent(".venv/bin/python").path
    }

    /// Starts the peer. Throws (never skips) when the venv is missing.
    /// - Parameters:
    ///   - peripherals: how many advertising devices (B1…BN), each with its own address,
    ///     name suffix and serial number `SN-000k` (a single one is "Bluejay Peer", `SN-0001`).
    ///   - arguments: more command-line options of `peer.py` (`--name`, `--serial`, …).
    static func start(role: RigRole = .peripheral, peripherals: Int = 1, arguments: [String] = []) throws -> BumbleRig {
        let python = pythonPath()
        let script = packageRoot().appendingPathComponent("Tests/InteropTests/bumble/peer.py").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw RigError(
                message: "The Bumble rig needs Python with Bumble at \(python), which does not exist. "
                    + "Run `make test` from the package root (it creates .venv and installs "
                    + "Tests/InteropTests/bumble/requirements.txt), or set BLUEJAY_PYTHON to such a Python.",
                context: ""
            )
        }
        guard FileManager.default.fileExists(atPath: script) else {
            throw RigError(message: "The rig's peer script is missing: \(script)", context: "")
        }
        let rig = try BumbleRig(
            role: role,
            python: python,
            arguments: [script, "--role", role.rawValue, "--peripherals", String(peripherals)] + arguments
        )
        return rig
    }

    private init(role: RigRole, python: String, arguments: [String]) throws {
        // Writing to the stdin of a peer that died must fail with EPIPE, not kill the tests.
        signal(SIGPIPE, SIG_IGN)
        self.role = role
        let logURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("bluejay-rig-\(getpid())-\(UUID().uuidString.prefix(8)).log")
        logPath = logURL.path
        events = RigEventStream(logPath: logPath)
        control = Mutex(Control())
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
              let log = FileHandle(forWritingAtPath: logPath) else {
            throw RigError(message: "Cannot create the rig's log file \(logPath)", context: "")
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-u"] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = log
        do {
            try process.run()
        } catch {
            throw RigError(message: "Cannot start \(python) \(arguments.joined(separator: " ")): \(error)", context: "rig log: \(logPath)")
        }
        try? log.close()
        control.withLock {
            $0.process = process
            $0.input = input.fileHandleForWriting
        }
        events.startReading(output.fileHandleForReading)
    }

    deinit {
        stop()
    }

    // MARK: Ready

    /// Waits for the peer's `ready` line: the controllers are up and the TCP port is listening.
    @discardableResult
    func waitForReady(timeout: Duration = .seconds(30)) async throws -> RigEvent {
        if let ready = control.withLock({ $0.ready }) { return ready }
        let ready = try await waitForEvent(named: "ready", timeout: timeout)
        guard ready.int("port") != nil, ready.string("peer_address") != nil else {
            throw RigError(message: "The rig's ready line lacks port or peer_address: \(ready)", context: events.context())
        }
        control.withLock { $0.ready = ready }
        return ready
    }

    private func readyEvent() -> RigEvent {
        guard let ready = control.withLock({ $0.ready }) else {
            preconditionFailure("BumbleRig: call waitForReady() before using the rig's address or port")
        }
        return ready
    }

    /// The TCP port of the controller served to Bluejay's host.
    var port: Int { readyEvent().int("port") ?? 0 }

    /// `tcp:127.0.0.1:PORT`, for `SystemTransports.open` and the CLI.
    var transportSpecification: String { "tcp:127.0.0.1:\(port)" }

    /// The address of the first Bumble device (peripheral B1, or the central), `"F0:00:00:00:00:01"`.
    var peerAddress: String { readyEvent().string("peer_address") ?? "" }

    /// `"random"` or `"public"`.
    var peerAddressType: String { readyEvent().string("peer_address_type") ?? "random" }

    /// The public address of the controller Bluejay's host gets (it answers Read BD_ADDR with it).
    var hostPublicAddress: String { readyEvent().string("host_public_address") ?? "" }

    /// The Python process, while it runs (`nil` once stopped).
    var processIdentifier: Int32? { control.withLock { $0.process?.processIdentifier } }

    /// Every advertising device (peripheral role).
    var peripherals: [RigPeripheral] {
        (readyEvent()["peripherals"]?.arrayValue ?? []).compactMap { item in
            guard let fields = item.objectValue,
                  let index = fields["index"]?.intValue,
                  let address = fields["address"]?.stringValue else { return nil }
            return RigPeripheral(
                index: index,
                address: address,
                addressType: fields["address_type"]?.stringValue ?? "random",
                name: fields["name"]?.stringValue ?? "",
                serial: fields["serial"]?.stringValue ?? ""
            )
        }
    }

    // MARK: Commands

    /// Sends a command without waiting for its ack; returns the `id` the ack will carry.
    @discardableResult
    func send(_ command: RigCommand) throws -> Int {
        let id = control.withLock { control in
            defer { control.nextID += 1 }
            return control.nextID
        }
        try write(command.json(id: id))
        return id
    }

    /// Sends a command given as a dictionary (`["cmd": "notify", "uuid": "2A37", "count": 10]`),
    /// without waiting for its ack and without adding an `id`.
    func send(_ command: [String: Any]) throws {
        guard let json = RigJSON(any: command), command["cmd"] is String else {
            throw RigError(message: "Not a rig command (needs a \"cmd\" string and JSON values): \(command)", context: events.context())
        }
        try write(json)
    }

    /// Sends a command and waits for its `ack`, which it returns; throws on the peer's
    /// `error` reply or when no reply comes within `timeout`.
    @discardableResult
    func request(_ command: RigCommand, timeout: Duration = .seconds(30)) async throws -> RigEvent {
        let id = try send(command)
        let reply = try await waitForEvent(
            named: nil,
            description: "ack of \(command)",
            matching: { event in (event.name == "ack" || event.name == "error") && event.int("id") == id },
            timeout: timeout
        )
        if reply.name == "error" {
            throw RigError(message: "The rig refused \(command): \(reply.string("message") ?? reply.line)", context: events.context())
        }
        return reply
    }

    private func write(_ json: RigJSON) throws {
        guard let input = control.withLock({ $0.input }) else {
            throw RigError(message: "The rig is stopped; cannot send \(json)", context: events.context())
        }
        do {
            try input.write(contentsOf: Data((json.description + "\n").utf8))
        } catch {
            throw RigError(message: "Cannot send \(json) to the rig: \(error)", context: events.context())
        }
    }

    // MARK: Events

    /// Waits for the first event named `name` that matches `predicate` and that no earlier
    /// wait returned, looking at the events already received first. Each event is returned
    /// by at most one wait, so waiting N times for `written` yields N writes in order.
    /// `predicate` runs under the rig's lock: it must not call the rig.
    @discardableResult
    func waitForEvent(
        named name: String,
        matching predicate: @escaping @Sendable (RigEvent) -> Bool = { _ in true },
        timeout: Duration = .seconds(10)
    ) async throws -> RigEvent {
        try await waitForEvent(named: name, description: "event \"\(name)\"", matching: predicate, timeout: timeout)
    }

    private func waitForEvent(
        named name: String?,
        description: String,
        matching predicate: @escaping @Sendable (RigEvent) -> Bool,
        timeout: Duration
    ) async throws -> RigEvent {
        try await events.wait(
            description: description,
            matching: { event in (name == nil || event.name == name) && predicate(event) },
            timeout: timeout
        )
    }

    /// Every event received so far, in order (also those a wait returned).
    var receivedEvents: [RigEvent] { events.all() }

    /// The last events and the tail of the log, as failure messages end.
    var diagnostics: String { events.context() }

    // MARK: Stopping

    /// Stops the peer: `quit` and end of stdin, then SIGTERM, then SIGKILL, each after a grace
    /// period; always waits for the process to exit. Idempotent. Blocks the calling thread
    /// (deinit uses it); async code should prefer ``shutdown()``.
    func stop() {
        guard let process = beginStopping() else { return }
        if !Self.waitForExit(process, timeout: Self.gracePeriod) {
            kill(process.processIdentifier, SIGTERM)
            if !Self.waitForExit(process, timeout: Self.gracePeriod) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        events.waitForEndOfOutput(timeout: Self.gracePeriod)
    }

    /// ``stop()`` without blocking a thread of the cooperative pool while the peer exits.
    /// Still stops the peer when the task is cancelled.
    func shutdown() async {
        guard let process = beginStopping() else { return }
        if await !Self.waitForExit(process, timeout: Self.gracePeriod) {
            kill(process.processIdentifier, SIGTERM)
            if await !Self.waitForExit(process, timeout: Self.gracePeriod) {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        let deadline = ContinuousClock.now.advanced(by: Self.gracePeriod)
        while !events.hasEnded, ContinuousClock.now < deadline {
            await Self.pause()
        }
    }

    /// Takes the process out of the rig (so only one caller stops it), sends `quit` and closes stdin.
    private func beginStopping() -> Process? {
        let (process, input) = control.withLock { control -> (Process?, FileHandle?) in
            defer {
                control.process = nil
                control.input = nil
            }
            return (control.process, control.input)
        }
        if let input {
            try? input.write(contentsOf: Data((RigCommand.quit.json(id: nil).description + "\n").utf8))
            try? input.close()
        }
        return process
    }

    private static func waitForExit(_ process: Process, timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            usleep(10_000)
        }
        return true
    }

    private static func waitForExit(_ process: Process, timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning {
            if ContinuousClock.now >= deadline { return false }
            await pause()
        }
        return true
    }

    /// 10 ms, also when the task is cancelled (stopping must go on).
    private static func pause() async {
        do {
            try await Task.sleep(for: .milliseconds(10))
        } catch {
            usleep(10_000)
        }
    }
}

/// Starts a rig, waits until it is ready, runs `body` and always stops the rig (also when
/// `body` throws; the rig's deinit is the last resort if the task is torn down).
func withBumbleRig<T>(
    role: RigRole = .peripheral,
    peripherals: Int = 1,
    arguments: [String] = [],
    readyTimeout: Duration = .seconds(30),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (BumbleRig) async throws -> T
) async throws -> T {
    let rig = try BumbleRig.start(role: role, peripherals: peripherals, arguments: arguments)
    do {
        try await rig.waitForReady(timeout: readyTimeout)
        let result = try await body(rig)
        await rig.shutdown()
        return result
    } catch {
        await rig.shutdown()
        throw error
    }
}

/// The peer's stdout as an ordered list of events, read on a thread of its own, and the
/// waits for them.
private final class RigEventStream: Sendable {
    private let logPath: String
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    private struct Waiter {
        var matches: @Sendable (RigEvent) -> Bool
        var description: String
        var continuation: CheckedContinuation<RigEvent, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var events: [RigEvent] = []
        var taken: [Bool] = []
        var waiters: [Int: Waiter] = [:]
        var nextWaiter = 0
        var ended = false
    }

    init(logPath: String) {
        self.logPath = logPath
    }

    func startReading(_ handle: FileHandle) {
        let thread = Thread { [self] in
            self.read(handle)
        }
        thread.name = "BumbleRig stdout"
        thread.start()
    }

    private func read(_ handle: FileHandle) {
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
            pending.append(contentsOf: buffer[0..<count])
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[..<newline], as: UTF8.self)
                pending.removeSubrange(...newline)
                if !line.trimmingCharacters(in: .whitespaces).isEmpty {
                    deliver(RigEvent(line: line))
                }
            }
        }
        _ = handle // keeps the descriptor open until here
        end()
        finished.signal()
    }

    private func deliver(_ event: RigEvent) {
        let resumed: (CheckedContinuation<RigEvent, any Error>, Task<Void, Never>?)? = state.withLock { state in
            state.events.append(event)
            state.taken.append(false)
            for key in state.waiters.keys.sorted() {
                guard let waiter = state.waiters[key], waiter.matches(event) else { continue }
                state.waiters[key] = nil
                state.taken[state.taken.count - 1] = true
                return (waiter.continuation, waiter.timer)
            }
            return nil
        }
        if let resumed {
            resumed.1?.cancel()
            resumed.0.resume(returning: event)
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
                message: "The rig's Python process exited while waiting for \(waiter.description)",
                context: context
            ))
        }
    }

    /// Whether the peer's stdout has ended (it exited).
    var hasEnded: Bool { state.withLock { $0.ended } }

    func waitForEndOfOutput(timeout: Duration) {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        if finished.wait(timeout: .now() + seconds) == .success { finished.signal() }
    }

    func wait(description: String, matching: @escaping @Sendable (RigEvent) -> Bool, timeout: Duration) async throws -> RigEvent {
        let key = state.withLock { state in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RigEvent, any Error>) in
                enum Outcome { case found(RigEvent), ended, waiting }
                let outcome: Outcome = state.withLock { state in
                    for index in state.events.indices where !state.taken[index] && matching(state.events[index]) {
                        state.taken[index] = true
                        return .found(state.events[index])
                    }
                    if state.ended { return .ended }
                    state.waiters[key] = Waiter(matches: matching, description: description, continuation: continuation)
                    return .waiting
                }
                switch outcome {
                case let .found(event):
                    continuation.resume(returning: event)
                case .ended:
                    continuation.resume(throwing: RigError(
                        message: "The rig's Python process has exited; no \(description) will come",
                        context: context()
                    ))
                case .waiting:
                    let timer = Task { [self] in
                        try? await Task.sleep(for: timeout)
                        guard !Task.isCancelled else { return }
                        self.fail(key, with: RigError(message: "No \(description) from the rig within \(timeout)", context: self.context()))
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

    func all() -> [RigEvent] {
        state.withLock { $0.events }
    }

    /// The log path, the last events and the tail of the log.
    func context() -> String {
        let recent = state.withLock { $0.events.suffix(15) }
        var text = "rig log: \(logPath)\nlast rig events:\n"
        text += recent.isEmpty ? "  (none)\n" : recent.map { "  \($0.line)\n" }.joined()
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        let tail = log.split(separator: "\n", omittingEmptySubsequences: false).suffix(25)
        text += "rig log tail:\n" + (tail.isEmpty ? "  (empty)" : tail.map { "  \($0)" }.joined(separator: "\n"))
        return text
    }
}
