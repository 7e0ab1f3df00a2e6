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

/// A `bluejay` process; `finish` waits for it and collects its output.
final class CLIProcess: @unchecked Sendable {
    private let process = Process()
    private let stdoutURL: URL
    private let stderrURL: URL

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

    init(_ arguments: [String]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        stdoutURL = directory.appendingPathComponent("stdout")
        stderrURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        process.executableURL = try Self.executable()
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["BLUEJAY_HCI"] = nil
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        process.standardInput = FileHandle.nullDevice
        try process.run()
    }

    /// Waits for the exit (killing the process after `timeout`) and returns its output.
    func finish(timeout: Duration = .seconds(30)) async throws -> CLIResult {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while process.isRunning, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let timedOut = process.isRunning
        if timedOut {
            process.interrupt()
            try await Task.sleep(for: .seconds(1))
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
        }
        let result = CLIResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        )
        try? FileManager.default.removeItem(at: stdoutURL.deletingLastPathComponent())
        if timedOut { Issue.record("bluejay \(process.arguments ?? []) did not finish within \(timeout)\n\(result)") }
        return result
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// Runs `bluejay` with the arguments and waits for it.
func bluejay(_ arguments: String..., timeout: Duration = .seconds(30)) async throws -> CLIResult {
    try await CLIProcess(arguments).finish(timeout: timeout)
}
