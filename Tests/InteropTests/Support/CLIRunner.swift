import Foundation
import Testing

/// Runs the built `bluejay` executable and captures what it printed.
struct CLIResult: Sendable, CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    /// The stdout lines parsed as JSON objects.
    func jsonObjects() throws -> [[String: Any]] {
        try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }
}

/// A `bluejay` process: one that ends by itself (``finish(timeout:)`` waits for it and
/// collects its output), or one that runs until stopped (`virtual`, `sensor`: its stdout read
/// line by line as it comes, ``waitForLine(timeout:_:)``, ``stop(signal:)``). Always stopped
/// (SIGINT, then SIGTERM, then SIGKILL) when the test ends or the object goes away.
final class CLIProcess: Sendable {
    private let process: ManagedProcess<String>

    /// The executable built beside the test bundle (`swift build --build-tests` builds it).
    static func executable() throws -> URL {
        let bundleDirectory = URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]).deletingLastPathComponent()
        let candidates = [
            bundleDirectory.appendingPathComponent("bluejay"),
            bundleDirectory.deletingLastPathComponent().appendingPathComponent("bluejay"),
            BumbleRig.packageRoot().appendingPathComponent(".build/debug/bluejay"),
        ]
        return try #require(candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) },
                            "the bluejay executable is not built; run `swift build --build-tests` (make test does)")
    }

    /// Where this process keeps its state (bonds, its identity key, generated static
    /// addresses): a directory of its own, so that no test sees another's bonds, nor the
    /// user's (a test that carries bonds from one command to the next says `--bond-directory`).
    private let stateDirectory: URL

    /// Runs `bluejay` with these arguments (without `BLUEJAY_HCI` from this environment, and
    /// with a `BLUEJAY_STATE_DIR` of its own).
    init(_ arguments: [String], input: ProcessInput = .nullDevice) throws {
        stateDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-cli-state-\(UUID().uuidString.prefix(8))")
        process = try ManagedProcess.launch(
            name: "bluejay process",
            executable: try Self.executable(),
            arguments: arguments,
            environment: ["BLUEJAY_HCI": nil, "BLUEJAY_STATE_DIR": stateDirectory.path, "XDG_STATE_HOME": nil],
            input: input,
            stopping: .interrupt,
            logName: "bluejay-cli",
            parse: { $0 }
        )
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: process.logPath)
        try? FileManager.default.removeItem(at: stateDirectory)
    }

    /// Every line printed so far.
    var lines: [String] { process.lines }

    /// Its output, for failure messages.
    var diagnostics: String {
        "\(process.commandLine)\n--- stdout\n\(lines.joined(separator: "\n"))\n--- stderr\n\(process.log)"
    }

    /// Waits for the first line that matches (also one an earlier wait returned).
    @discardableResult
    func waitForLine(timeout: Duration = .seconds(15), _ predicate: @escaping @Sendable (String) -> Bool) async throws -> String {
        try await process.wait(for: "matching line", consuming: false, timeout: timeout, matching: predicate)
    }

    /// Waits for `ready` and returns the lines before it.
    func waitForReady() async throws -> [String] {
        let ready = try await waitForLine { $0 == "ready" }
        return Array(lines.prefix { $0 != ready })
    }

    /// Sends `signal` and waits for the exit; returns the exit status. The bound covers the
    /// command's shutdown, whose every controller command may take the command timeout (5 s)
    /// on a loaded machine: it is a limit, never a wait.
    @discardableResult
    func stop(signal number: Int32) async throws -> Int32 {
        process.sendSignal(number)
        guard let status = try await process.exitStatus(within: .seconds(30)) else {
            stop()
            throw RigError(message: "bluejay did not exit after signal \(number)", context: diagnostics)
        }
        return status
    }

    /// SIGINT, then SIGTERM, then SIGKILL, each after a grace period. Idempotent. Blocks the
    /// calling thread; async code uses ``shutdown()``.
    func stop() {
        process.stop()
    }

    /// ``stop()`` without blocking a thread of the cooperative pool while the process exits.
    func shutdown() async {
        await process.shutdown()
    }

    /// Waits for the exit (stopping the process after `timeout`) and returns its output.
    func finish(timeout: Duration = .seconds(30)) async throws -> CLIResult {
        let exited = try await process.exitStatus(within: timeout)
        if exited == nil { await process.shutdown() }
        let result = CLIResult(
            status: try await process.exitStatus(within: .zero) ?? -1,
            stdout: lines.map { $0 + "\n" }.joined(),
            stderr: process.log
        )
        if exited == nil { Issue.record("bluejay \(process.commandLine) did not finish within \(timeout)\n\(result)") }
        return result
    }
}

/// Runs `bluejay` with the arguments and waits for it.
func bluejay(_ arguments: String..., timeout: Duration = .seconds(30)) async throws -> CLIResult {
    try await bluejay(arguments, timeout: timeout)
}

/// Runs `bluejay` with these arguments to the end.
func bluejay(_ arguments: [String], input: ProcessInput = .nullDevice, timeout: Duration = .seconds(30)) async throws -> CLIResult {
    try await CLIProcess(arguments, input: input).finish(timeout: timeout)
}
