import DBus
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A private `dbus-daemon` for a test suite: its own configuration and socket in a temporary
/// directory, started with `--nofork --print-address`, ready once it prints its address (no
/// sleeping), and always stopped and its directory removed. It runs tethered to the test
/// process (``ChildTether``): should the tests die, it ends with them.
///
/// Debian's `dbus-daemon` package; `scripts/test.sh` installs it when missing. Suites that need
/// one are disabled with a message saying so when it is not installed.
final class DBusDaemon: Sendable {
    /// What the daemon's configuration says beyond "allow everything".
    struct Configuration: Sendable {
        /// `reply_timeout`: how long the bus waits for an answer before it sends NoReply.
        var replyTimeoutMilliseconds = 60_000
        /// Names the policy refuses to let anyone own (AccessDenied).
        var forbiddenNames = ["org.example.Forbidden"]
        /// Also listen on an abstract socket.
        var abstractSocket = true
    }

    static let executable = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon", "/usr/local/bin/dbus-daemon"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    static var isAvailable: Bool { executable != nil }

    static let unavailableMessage: Comment =
        "dbus-daemon is not installed (Debian package dbus-daemon; scripts/test.sh installs it): the D-Bus interop tests are skipped"

    /// The suite's daemon (set by the ``Trait/privateBus`` trait).
    @TaskLocal static var current: DBusDaemon?

    /// Every address it printed (`;`-separated), e.g. `unix:abstract=…,guid=…;unix:path=…,guid=…`.
    let address: String
    let directory: URL
    /// The tether's wrapper; the daemon is its child.
    private let process: Process
    /// The tether: the daemon ends when its writing end closes.
    private let tether: Pipe

    private init(address: String, directory: URL, process: Process, tether: Pipe) {
        self.address = address
        self.directory = directory
        self.process = process
        self.tether = tether
    }

    /// The `unix:path=` address alone.
    var pathAddress: String { address.split(separator: ";").first { $0.hasPrefix("unix:path=") }.map(String.init) ?? address }

    /// The `unix:abstract=` address alone, when it listens on one.
    var abstractAddress: String? { address.split(separator: ";").first { $0.hasPrefix("unix:abstract=") }.map(String.init) }

    /// Starts a daemon and waits (at most 20 s) for the line with its address.
    static func start(_ configuration: Configuration = Configuration()) async throws -> DBusDaemon {
        guard let executable else { throw DaemonError("dbus-daemon is not installed") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-dbus-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let denials = configuration.forbiddenNames.map { "    <deny own=\"\($0)\"/>" }.joined(separator: "\n")
        let abstract = configuration.abstractSocket ? "  <listen>unix:abstract=\(directory.path)/abstract</listen>\n" : ""
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(socket)</listen>
            \(abstract)  <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
            \(denials)
              </policy>
              <limit name="reply_timeout">\(configuration.replyTimeoutMilliseconds)</limit>
            </busconfig>
            """
        let configPath = directory.appendingPathComponent("bus.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = ChildTether.shell
        process.arguments = ChildTether.arguments(running: executable, ["--config-file=\(configPath.path)", "--nofork", "--print-address"])
        let output = Pipe()
        let tether = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        process.standardInput = tether
        try process.run()
        do {
            let line = try await firstLine(of: output.fileHandleForReading, timeout: .seconds(20))
            guard line.hasPrefix("unix:") else { throw DaemonError("dbus-daemon printed \"\(line)\", not its address") }
            return DBusDaemon(address: line, directory: directory, process: process, tether: tether)
        } catch {
            _ = await end(process, tether: tether, directory: directory)
            throw error
        }
    }

    /// Reads the first line on a thread of its own; fails if the pipe ends or `timeout` passes.
    private static func firstLine(of handle: FileHandle, timeout: Duration) async throws -> String {
        let box = LineBox()
        let thread = Thread {
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                bytes += chunk
                if let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) {
                    bytes = Array(bytes[..<newline])
                    break
                }
            }
            box.finish(bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
        }
        thread.start()
        return try await box.wait(timeout: timeout)
    }

    /// Stops the daemon and removes its directory: closes the tether (the wrapper's watcher then
    /// kills the daemon with SIGKILL, as the daemon keeps nothing worth a clean exit, and the
    /// wrapper exits), then SIGTERM and SIGKILL to the wrapper should it still run after a grace
    /// period. Waits on a thread of its own, not on the cooperative pool. Returns whether the
    /// tether's end alone ended it (no signal was needed).
    @discardableResult
    func stop() async -> Bool {
        await Self.end(process, tether: tether, directory: directory)
    }

    private static func end(_ process: Process, tether: Pipe, directory: URL) async -> Bool {
        await onThreadOfItsOwn(named: "dbus-daemon stop") {
            try? tether.fileHandleForWriting.close()
            let onItsOwn = process.end(escalating: [(SIGTERM, .seconds(5)), (SIGKILL, .seconds(5))])
            try? FileManager.default.removeItem(at: directory)
            return onItsOwn
        }
    }

    /// Without a ``stop()``: the tether's end ends the daemon, without waiting for it.
    deinit {
        try? tether.fileHandleForWriting.close()
    }

    /// The daemon's own process identifier (the wrapper's `dbus-daemon` child), while it runs.
    var daemonProcessID: pid_t? {
        let wrapper = process.processIdentifier
        guard let children = try? String(contentsOfFile: "/proc/\(wrapper)/task/\(wrapper)/children", encoding: .utf8) else { return nil }
        return children.split(separator: " ").compactMap { pid_t($0) }.first { child in
            (try? String(contentsOfFile: "/proc/\(child)/comm", encoding: .utf8))?.hasPrefix("dbus-daemon") == true
        }
    }

    /// A connection to this daemon.
    func connect(_ options: DBusConnection.Options = DBusConnection.Options()) async throws -> DBusConnection {
        try await DBusConnection.connect(to: pathAddress, options: options)
    }
}

struct DaemonError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// The first line of a pipe, handed from a reader thread to an async wait with a timeout.
private final class LineBox: Sendable {
    private let state = Mutex<(line: String??, continuation: CheckedContinuation<String, any Error>?)>((nil, nil))

    func finish(_ line: String?) {
        let continuation = state.withLock { state -> CheckedContinuation<String, any Error>? in
            state.line = .some(line)
            defer { state.continuation = nil }
            return state.continuation
        }
        continuation?.resume(with: line.map { .success($0) } ?? .failure(DaemonError("dbus-daemon exited before printing its address")))
    }

    func wait(timeout: Duration) async throws -> String {
        try await withThrowingTaskGroup(of: String.self) { group in
            group.addTask {
                try await withCheckedThrowingContinuation { continuation in
                    let early = self.state.withLock { state -> String?? in
                        if let line = state.line { return line }
                        state.continuation = continuation
                        return nil
                    }
                    if let early {
                        continuation.resume(with: early.map { .success($0) } ?? .failure(DaemonError("dbus-daemon exited before printing its address")))
                    }
                }
            }
            group.addTask {
                try await Task.sleep(for: timeout)
                throw DaemonError("dbus-daemon printed no address within \(timeout)")
            }
            defer { group.cancelAll() }
            guard let line = try await group.next() else { throw DaemonError("no result") }
            return line
        }
    }
}

/// Runs a suite with a private daemon of its own, started before its first test and stopped
/// after its last (``DBusDaemon/current`` inside).
struct PrivateBusTrait: SuiteTrait, TestScoping {
    var configuration: DBusDaemon.Configuration
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let daemon = try await DBusDaemon.start(configuration)
        do {
            try await DBusDaemon.$current.withValue(daemon) {
                try await function()
            }
        } catch {
            await daemon.stop()
            throw error
        }
        await daemon.stop()
    }
}

extension Trait where Self == PrivateBusTrait {
    /// A private dbus-daemon for the suite.
    static func privateBus(_ configuration: DBusDaemon.Configuration = DBusDaemon.Configuration()) -> Self {
        PrivateBusTrait(configuration: configuration)
    }
}

/// The suite's daemon, or a failure saying the trait is missing.
func suiteDaemon(sourceLocation: SourceLocation = #_sourceLocation) throws -> DBusDaemon {
    try #require(DBusDaemon.current, "the suite needs the .privateBus() trait", sourceLocation: sourceLocation)
}
