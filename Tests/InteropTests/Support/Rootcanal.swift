import Foundation

/// Google's Rootcanal (PyPI `rootcanal`, pinned in `Tests/InteropTests/bumble/requirements.txt`):
/// the virtual controller Android's stack is tested on, stricter about HCI than Bumble's. Every
/// TCP connection to its HCI port is a new controller, with a public address of its own, on one
/// simulated LE radio: the rig's Bumble devices (`peer.py --controller rootcanal`) and our host
/// each take one. See `Tests/InteropTests/bumble/README.md`, "Rootcanal".
///
/// ``start()`` runs the binary from the test venv in a scratch directory with every port chosen
/// by the system (port 0), reads the HCI port from its log and waits for the log's
/// `initialize: Finished`; ``shutdown()`` ends it (SIGKILL) and removes the
/// directory. Its log (it logs on stdout) is kept in a file named in every failure message.
final class Rootcanal: Sendable {
    /// The TCP port of the HCI server: each connection there is a new controller.
    let hciPort: Int
    /// Its scratch working directory, removed when it ends.
    let directory: URL
    private let process: ManagedProcess<String>

    private init(process: ManagedProcess<String>, hciPort: Int, directory: URL) {
        self.process = process
        self.hciPort = hciPort
        self.directory = directory
    }

    deinit {
        stop()
    }

    /// `tcp:127.0.0.1:PORT`: a new controller for our host.
    var transportSpecification: String { "tcp:127.0.0.1:\(hciPort)" }

    /// Rootcanal's log.
    var logPath: String { process.logPath }

    /// The last lines of its log, as failure messages end.
    var diagnostics: String { process.context() }

    /// Whether the process has ended (a crash, or ``stop()``).
    var hasEnded: Bool { process.hasEnded }

    /// The log's lines so far (it logs on stdout).
    var logLines: [String] { process.lines }

    /// `BLUEJAY_ROOTCANAL`, else the binary that the `rootcanal` package put in the venv of
    /// ``BumbleRig/pythonPath()``: `<venv>/lib/python3.*/site-packages/rootcanal/bin/linux-x86_64/rootcanal`.
    static func executablePath() throws -> String {
        if let path = ProcessInfo.processInfo.environment["BLUEJAY_ROOTCANAL"], !path.isEmpty { return path }
        let python = BumbleRig.pythonPath()
        let venv = URL(fileURLWithPath: python).deletingLastPathComponent().deletingLastPathComponent()
        let lib = venv.appendingPathComponent("lib")
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: lib.path)) ?? []).filter { $0.hasPrefix("python") }.sorted()
        for version in versions {
            let path = lib.appendingPathComponent("\(version)/site-packages/rootcanal/bin/linux-\(machine)/rootcanal").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw RigError(
            message: "Rootcanal is not installed in the venv of \(python) (no \(lib.path)/python3.*/site-packages/rootcanal/bin/linux-\(machine)/rootcanal). "
                + "Run `make venv` (or `make test`) from the package root: it installs Tests/InteropTests/bumble/requirements.txt, "
                + "rootcanal==1.10.0 included; or set BLUEJAY_ROOTCANAL to the binary.",
            context: ""
        )
    }

    private static var machine: String {
        #if arch(x86_64)
        "x86_64"
        #elseif arch(arm64)
        "aarch64"
        #else
        "unknown"
        #endif
    }

    /// Starts Rootcanal and waits until it is ready. Each of its four ports is chosen by the
    /// system (port 0), so none can be taken by someone else between a choice and the bind;
    /// should a bind fail all the same (its log says "Error binding"), it starts again, up to
    /// `attempts` times.
    static func start(attempts: Int = 3, readyTimeout: Duration = .seconds(30)) async throws -> Rootcanal {
        let executable = try executablePath()
        var failures: [String] = []
        for _ in 0..<max(attempts, 1) {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-rootcanal-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let process: ManagedProcess<String>
            do {
                process = try ManagedProcess.launch(
                    name: "Rootcanal",
                    executable: URL(fileURLWithPath: executable),
                    arguments: ["-hci_port=0", "-link_port=0", "-link_ble_port=0", "-test_port=0"],
                    directory: directory,
                    input: .nullDevice,
                    // Rootcanal keeps nothing to save. And SIGTERM would not do: Foundation's
                    // Process hands the spawning thread's signal mask on, which blocks SIGTERM in
                    // this test process (SigBlk in /proc/PID/status), and Rootcanal never unblocks it.
                    stopping: .kill,
                    logName: "bluejay-rootcanal",
                    copiesOutputToLog: true,
                    parse: { $0 }
                )
            } catch {
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
            do {
                _ = try await process.wait(for: "\"initialize: Finished\" in its log", consuming: false, timeout: readyTimeout) {
                    $0.contains("initialize: Finished")
                }
                let lines = process.lines
                if let failure = lines.first(where: { $0.contains("Error binding") }) {
                    failures.append(failure)
                    await process.shutdown()
                    try? FileManager.default.removeItem(at: directory)
                    continue
                }
                guard let port = hciPort(inLog: lines) else {
                    throw RigError(message: "Rootcanal is up but its log does not say its HCI port "
                        + "(a line \"Opening an HCI with port 0\" then \"Listening on: N\")", context: process.context())
                }
                return Rootcanal(process: process, hciPort: port, directory: directory)
            } catch {
                await process.shutdown()
                try? FileManager.default.removeItem(at: directory)
                throw error
            }
        }
        throw RigError(message: "Rootcanal could not bind its ports in \(attempts) attempts: \(failures.joined(separator: "; "))", context: "")
    }

    /// The port of the HCI server in Rootcanal 1.10.0's log: `test_environment.cc` says
    /// "Opening an HCI with port 0", and the next "Listening on: N (fd)" is that server's.
    static func hciPort(inLog lines: [String]) -> Int? {
        guard let opening = lines.firstIndex(where: { $0.contains("Opening an HCI with port") }) else { return nil }
        for line in lines[(opening + 1)...] {
            guard let range = line.range(of: "Listening on: ") else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// Ends Rootcanal (SIGKILL) and removes its scratch directory; the log stays.
    /// Idempotent. Blocks the calling thread; async code should prefer ``shutdown()``.
    func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// ``stop()`` without blocking a thread of the cooperative pool.
    func shutdown() async {
        await process.shutdown()
        try? FileManager.default.removeItem(at: directory)
    }
}
