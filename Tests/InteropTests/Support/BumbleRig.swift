import Foundation
import Synchronization

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

/// A script of `Tests/InteropTests/bumble` that a ``BumbleRig`` runs: each writes JSON events
/// on stdout, one per line, the first one `ready`, and its logs on stderr.
struct RigScript: Sendable {
    /// The file name in `Tests/InteropTests/bumble`.
    var file: String
    /// The fields its `ready` line must carry.
    var readyFields: [String]
    /// The start of its log file's name.
    var logName: String
    /// What its Bumble device does (for peer.py, `--role` says).
    var role: RigRole

    /// The rig: Bumble controllers on one link, one served to Bluejay's host, the others
    /// driven by Bumble devices acting per ``RigRole``; answers the commands of ``RigCommand``.
    static let peer = RigScript(file: "peer.py", readyFields: ["port", "peer_address"], logName: "bluejay-rig", role: .peripheral)
    /// A Bumble central and scanner on peer.py's link, for Bluejay's peripheral role; answers
    /// commands by name (``BumbleRig/request(_:_:timeout:)``) with handles and hex values.
    static let central = RigScript(file: "central.py", readyFields: ["port", "peer_address"], logName: "bluejay-central", role: .central)
    /// A Bumble host advertising a GATT service through a controller it reaches with
    /// `--transport` (a Bluejay virtual controller). Reports `ready`, `connected`, `read`,
    /// `disconnected`; takes no commands and ends at the end of its stdin.
    static let hostOnVirtual = RigScript(file: "host_on_virtual.py", readyFields: ["address"], logName: "bluejay-host-on-virtual",
                                         role: .peripheral)
}

/// Runs `Tests/InteropTests/bumble/peer.py`: Bumble virtual controllers on one link, one of
/// them served to Bluejay's host over H4/TCP (``transportSpecification``), the others driven
/// by Bumble devices acting per ``RigRole``. Talks to it with JSON lines (see
/// `Tests/InteropTests/bumble/README.md`). Runs the other scripts of that folder with the same
/// protocol too (``RigScript``).
///
/// Use ``withBumbleRig(role:peripherals:arguments:readyTimeout:isolation:_:)``, which always
/// stops the peer. ``stop()`` (also run on deinit) never leaves the Python process running.
final class BumbleRig: Sendable {
    let script: RigScript
    let role: RigRole
    private let process: ManagedProcess<RigEvent>
    private let control = Mutex(Control())

    private struct Control {
        var ready: RigEvent?
        var nextID = 1
    }

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
        try BumbleRig(script: .peer, role: role, arguments: ["--role", role.rawValue, "--peripherals", String(peripherals)] + arguments)
    }

    /// Starts a script of the rig's folder (`.central`, `.hostOnVirtual`) with these
    /// command-line arguments. Throws (never skips) when the venv is missing.
    static func start(script: RigScript, arguments: [String] = []) throws -> BumbleRig {
        try BumbleRig(script: script, role: script.role, arguments: arguments)
    }

    private init(script: RigScript, role: RigRole, arguments: [String]) throws {
        let python = Self.pythonPath()
        let path = Self.packageRoot().appendingPathComponent("Tests/InteropTests/bumble/\(script.file)").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw RigError(
                message: "The Bumble rig needs Python with Bumble at \(python), which does not exist. "
                    + "Run `make test` from the package root (it creates .venv and installs "
                    + "Tests/InteropTests/bumble/requirements.txt), or set BLUEJAY_PYTHON to such a Python.",
                context: ""
            )
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw RigError(message: "The rig's script is missing: \(path)", context: "")
        }
        self.script = script
        self.role = role
        process = try ManagedProcess.launch(
            name: "rig",
            executable: URL(fileURLWithPath: python),
            arguments: ["-u", path] + arguments,
            environment: ["PYTHONUNBUFFERED": "1"],
            input: .pipe,
            stopping: .quit(RigCommand.quit.json(id: nil).description),
            logName: script.logName,
            parse: { line in line.trimmingCharacters(in: .whitespaces).isEmpty ? nil : RigEvent(line: line) }
        )
    }

    /// The peer's stderr (Python and Bumble logs). Named in every failure message.
    var logPath: String { process.logPath }

    // MARK: Ready

    /// Waits for the peer's `ready` line: the controllers are up and the TCP port is listening
    /// (for `.hostOnVirtual`: it advertises).
    @discardableResult
    func waitForReady(timeout: Duration = .seconds(30)) async throws -> RigEvent {
        if let ready = control.withLock({ $0.ready }) { return ready }
        let ready = try await waitForEvent(named: "ready", timeout: timeout)
        let missing = script.readyFields.filter { ready[$0] == nil }
        guard missing.isEmpty else {
            throw RigError(message: "The rig's ready line lacks \(missing.joined(separator: " or ")): \(ready)", context: process.context())
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

    /// The TCP port of the controller served to Bluejay's host (on Rootcanal, its HCI port:
    /// every connection there is a new controller).
    var port: Int { readyEvent().int("port") ?? 0 }

    /// `tcp:127.0.0.1:PORT`, for `SystemTransports.open` and the CLI.
    var transportSpecification: String { "tcp:127.0.0.1:\(port)" }

    /// The pseudo-terminal that serves controller A with `--uart-pty` (`/dev/pts/N`), for
    /// `serial:PATH@BAUD`; `nil` when the rig serves it over TCP.
    var uartPath: String? { readyEvent().string("uart_path") }

    /// The address of the first Bumble device (peripheral B1, or the central), `"F0:00:00:00:00:01"`.
    var peerAddress: String { readyEvent().string("peer_address") ?? "" }

    /// `"random"` or `"public"`.
    var peerAddressType: String { readyEvent().string("peer_address_type") ?? "random" }

    /// The public address of the controller Bluejay's host gets (it answers Read BD_ADDR with it);
    /// empty on Rootcanal, which gives the host's controller an address only when the host
    /// connects: ask the host then (`LEHost.publicAddressText`).
    var hostPublicAddress: String { readyEvent().string("host_public_address") ?? "" }

    /// The static address controller A reports through Zephyr's vendor commands
    /// (`--controller-variant zephyr-static-address`).
    var hostStaticAddress: String? { readyEvent().string("host_static_address") }

    /// `"bumble"` or `"rootcanal"`: whose controllers the rig's devices and our host are on.
    var controller: String { readyEvent().string("controller") ?? "bumble" }

    /// The Python process, while it runs (`nil` once stopped).
    var processIdentifier: Int32? { process.processIdentifier }

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
        try process.writeLine(command.json(id: id).description)
        return id
    }

    /// Sends a command given as a dictionary (`["cmd": "notify", "uuid": "2A37", "count": 10]`),
    /// without waiting for its ack and without adding an `id`.
    func send(_ command: [String: Any]) throws {
        guard let json = RigJSON(any: command), command["cmd"] is String else {
            throw RigError(message: "Not a rig command (needs a \"cmd\" string and JSON values): \(command)", context: process.context())
        }
        try process.writeLine(json.description)
    }

    /// Sends a command and waits for its `ack`, which it returns; throws on the peer's
    /// `error` reply or when no reply comes within `timeout`.
    @discardableResult
    func request(_ command: RigCommand, timeout: Duration = .seconds(30)) async throws -> RigEvent {
        let id = try send(command)
        let reply = try await process.wait(for: "ack of \(command)", timeout: timeout) { event in
            (event.name == "ack" || event.name == "error") && event.int("id") == id
        }
        if reply.name == "error" {
            throw RigError(message: "The rig refused \(command): \(reply.string("message") ?? reply.line)", context: process.context())
        }
        return reply
    }

    /// ``request(_:timeout:)`` with the command given by name and fields of `String`, `Int`,
    /// `Bool`, `[UInt8]` (sent as hex), …: `request("read", ["handle": 12])`.
    @discardableResult
    func request(_ name: String, _ fields: [String: Any] = [:], timeout: Duration = .seconds(30)) async throws -> RigEvent {
        guard let json = RigJSON(any: fields)?.objectValue else {
            throw RigError(message: "Not JSON values: \(fields)", context: process.context())
        }
        return try await request(RigCommand(name, json), timeout: timeout)
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
        try await process.wait(for: "event \"\(name)\"", timeout: timeout) { event in event.name == name && predicate(event) }
    }

    /// Every event received so far, in order (also those a wait returned).
    var receivedEvents: [RigEvent] { process.lines }

    /// Makes the events named `name` received so far invisible to later waits: a test that is
    /// about to start what causes such an event waits for the new one, never an older one that
    /// an earlier step caused (a stale "subscribed" would let the test notify before the app
    /// listens).
    func discardEvents(named name: String) {
        process.discard { $0.name == name }
    }

    /// The last events and the tail of the log, as failure messages end.
    var diagnostics: String { process.context() }

    // MARK: Stopping

    /// Stops the peer: `quit` and end of stdin, then SIGTERM, then SIGKILL, each after a grace
    /// period; always waits for the process to exit. Idempotent. Blocks the calling thread
    /// (deinit uses it); async code should prefer ``shutdown()``.
    func stop() {
        process.stop()
    }

    /// ``stop()`` without blocking a thread of the cooperative pool while the peer exits.
    /// Still stops the peer when the task is cancelled.
    func shutdown() async {
        await process.shutdown()
    }
}

/// Starts a rig, waits until it is ready, runs `body` and always stops the rig (also when
/// `body` throws; the rig's deinit is the last resort if the task is torn down). On
/// `controller` `.rootcanal` the rig's devices and our host are on Rootcanal (``withRigController(_:isolation:_:)``).
func withBumbleRig<T>(
    role: RigRole = .peripheral,
    peripherals: Int = 1,
    arguments: [String] = [],
    controller: InteropController = .bumble,
    readyTimeout: Duration = .seconds(30),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (BumbleRig) async throws -> T
) async throws -> T {
    try await withRigController(controller) { controllerArguments in
        try await run(try BumbleRig.start(role: role, peripherals: peripherals, arguments: arguments + controllerArguments),
                      readyTimeout: readyTimeout, body)
    }
}

/// ``withBumbleRig(role:peripherals:arguments:controller:readyTimeout:isolation:_:)`` for another
/// script of the rig's folder (`.central`, …).
func withBumbleRig<T>(
    script: RigScript,
    arguments: [String] = [],
    controller: InteropController = .bumble,
    readyTimeout: Duration = .seconds(30),
    isolation: isolated (any Actor)? = #isolation,
    _ body: (BumbleRig) async throws -> T
) async throws -> T {
    try await withRigController(controller) { controllerArguments in
        try await run(try BumbleRig.start(script: script, arguments: arguments + controllerArguments), readyTimeout: readyTimeout, body)
    }
}

private func run<T>(
    _ rig: BumbleRig,
    readyTimeout: Duration,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (BumbleRig) async throws -> T
) async throws -> T {
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
