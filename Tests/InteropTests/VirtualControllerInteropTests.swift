import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Our virtual controller against a stack nobody here wrote: a Bumble host drives one
/// ``VirtualController`` over HCI/TCP (``VirtualControllerServer``) as an advertising GATT
/// peripheral; our ``LEHost`` on a second controller of the same link scans, connects,
/// discovers the service and reads its characteristics.
@Suite("Virtual controller interop with a Bumble host", .serialized)
struct VirtualControllerInteropTests {
    static let bumbleAddress = "F1:E2:D3:C4:B5:A6"
    static let bumbleName = "Bumble on Virtual"
    static let serviceUUID: BluetoothUUID = "6E40A000-B5A3-F393-E0A9-E50E24DCCA9E"
    static let greetingUUID: BluetoothUUID = "6E40A001-B5A3-F393-E0A9-E50E24DCCA9E"
    static let longUUID: BluetoothUUID = "6E40A002-B5A3-F393-E0A9-E50E24DCCA9E"

    @Test func bumbleHostOnAVirtualControllerServesOurHost() async throws {
        let link = VirtualLink()
        let bumbleController = link.addController(name: "bumble", address: try #require(BluetoothAddress("F0:F1:F2:F3:F4:F5")))
        let ourController = link.addController(name: "bluejay", address: try #require(BluetoothAddress("C0:B1:00:00:00:01")),
                                               position: VirtualPosition(x: 3, y: 0))
        let server = VirtualControllerServer(controller: bumbleController)
        try server.start()
        defer { server.stop() }
        let transport = try #require(server.bumbleTransport)

        let bumble = try BumbleHostProcess.start(arguments: ["--transport", transport, "--address", Self.bumbleAddress, "--name", Self.bumbleName])
        defer { bumble.stop() }
        let ready = try await bumble.event("ready", timeout: .seconds(60))
        #expect(ready["address"] == Self.bumbleAddress)
        #expect(bumbleController.isAdvertising, "Bumble enabled advertising through our controller")
        #expect(bumbleController.randomAddress == BluetoothAddress(Self.bumbleAddress), "LE Set Random Address from Bumble")

        let host = LEHost(transport: ourController.makeTransport())
        try await host.powerOn()
        let peer = DeviceAddress(try #require(BluetoothAddress(Self.bumbleAddress)), type: .random)
        let advertisement = try await interopTimeout("discovering Bumble", .seconds(10)) {
            for try await advertisement in try await host.scan() where advertisement.peer == peer && advertisement.scanResponse != nil {
                return advertisement
            }
            throw InteropWaitError(description: "the scan ended")
        }
        await host.stopScanning()
        // The name is only in the scan response: our controller carries it (Bumble's own
        // virtual controller would echo the advertising data instead).
        #expect(advertisement.localName == Self.bumbleName)
        #expect(advertisement.serviceUUIDs.contains(Self.serviceUUID))
        #expect(advertisement.rssi == link.rssi(from: bumbleController, at: ourController))

        let connection = try await host.connect(to: peer, timeout: .seconds(10))
        let connected = try await bumble.event("connected")
        #expect(connected["peer_address"] == "C0:B1:00:00:00:01")
        #expect(connected["role"] == "peripheral")

        let services = try await connection.gatt.discoverAllPrimaryServices()
        let service = try #require(services.first { $0.uuid == Self.serviceUUID }, "services: \(services)")
        let characteristics = try await connection.gatt.discoverCharacteristics(of: service)
        let greeting = try #require(characteristics.first { $0.uuid == Self.greetingUUID })
        let long = try #require(characteristics.first { $0.uuid == Self.longUUID })
        #expect(try await connection.gatt.read(greeting) == Array("Hello from Bumble on a Bluejay virtual controller".utf8))
        _ = try await bumble.event("read")
        // 400 octets: several LL PDUs and ACL packets each way, reassembled by both stacks.
        let longValue = try await connection.gatt.readLongValue(handle: long.valueHandle)
        #expect(longValue == (0..<400).map { UInt8($0 % 251) })

        try await connection.disconnect()
        #expect(connection.disconnectReason == .connectionTerminatedByLocalHost)
        let disconnected = try await bumble.event("disconnected")
        #expect(disconnected["reason"] == "\(HCIStatus.remoteUserTerminatedConnection.rawValue)")
        await host.shutdown()
    }
}

private struct InteropWaitError: Error, CustomStringConvertible {
    var description: String
}

private func interopTimeout<T: Sendable>(_ description: String, _ timeout: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let result = first else {
            throw InteropWaitError(description: "\(description) took longer than \(timeout)")
        }
        return result
    }
}

/// `Tests/InteropTests/bumble/host_on_virtual.py` in the venv's Python: its JSON lines on
/// stdout as events, its log in a temporary file named in every failure. ``stop()`` (also on
/// deinit) always ends the process: end of stdin, then SIGTERM, then SIGKILL.
private final class BumbleHostProcess: Sendable {
    /// An event line, its values as text (numbers in decimal).
    typealias Event = [String: String]

    private struct State {
        var events: [Event] = []
        var taken: [Bool] = []
        var waiters: [Int: (name: String, continuation: CheckedContinuation<Event, any Error>)] = [:]
        var nextWaiter = 0
        var ended = false
    }

    let logPath: String
    private let process: Process
    private let input: FileHandle
    private let state = Mutex(State())
    private let stopped = Mutex(false)

    static func packageRoot(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func start(arguments: [String]) throws -> BumbleHostProcess {
        let environment = ProcessInfo.processInfo.environment
        let python = environment["BLUEJAY_PYTHON"].flatMap { $0.isEmpty ? nil : $0 }
            ?? packageRoot().appendingPathComponent(".venv/bin/python").path
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw InteropWaitError(description: "No Python with Bumble at \(python): run `make test` (it creates .venv from "
                + "Tests/InteropTests/bumble/requirements.txt) or set BLUEJAY_PYTHON")
        }
        let script = packageRoot().appendingPathComponent("Tests/InteropTests/bumble/host_on_virtual.py").path
        return try BumbleHostProcess(python: python, arguments: ["-u", script] + arguments)
    }

    private init(python: String, arguments: [String]) throws {
        signal(SIGPIPE, SIG_IGN)
        logPath = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-host-on-virtual-\(getpid())-\(UUID().uuidString.prefix(8)).log").path
        guard FileManager.default.createFile(atPath: logPath, contents: nil), let log = FileHandle(forWritingAtPath: logPath) else {
            throw InteropWaitError(description: "cannot create \(logPath)")
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = log
        input = stdin.fileHandleForWriting
        try process.run()
        try? log.close()
        let reader = stdout.fileHandleForReading
        let thread = Thread { [self] in readLines(reader) }
        thread.name = "host_on_virtual stdout"
        thread.start()
    }

    deinit { stop() }

    private func readLines(_ handle: FileHandle) {
        var pending = Data()
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            pending.append(chunk)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending.removeSubrange(pending.startIndex...newline)
                if let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any] {
                    deliver(object.compactMapValues { value in
                        if let text = value as? String { return text }
                        if let number = value as? NSNumber { return number.stringValue }
                        return nil
                    })
                }
            }
        }
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: InteropWaitError(description: "host_on_virtual.py exited before \"\(waiter.name)\"\(diagnostics)"))
        }
    }

    private func deliver(_ event: Event) {
        let name = event["event"] ?? ""
        let resumed = state.withLock { state -> CheckedContinuation<Event, any Error>? in
            state.events.append(event)
            state.taken.append(false)
            guard let key = state.waiters.keys.sorted().first(where: { state.waiters[$0]?.name == name }) else { return nil }
            state.taken[state.taken.count - 1] = true
            return state.waiters.removeValue(forKey: key)?.continuation
        }
        resumed?.resume(returning: event)
    }

    /// The next event named `name` that no earlier wait returned; an `error` event fails it.
    func event(_ name: String, timeout: Duration = .seconds(15)) async throws -> Event {
        let key = state.withLock { state -> Int in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            let waiter = state.withLock { $0.waiters.removeValue(forKey: key) }
            waiter?.continuation.resume(throwing: InteropWaitError(description: "no \"\(name)\" from host_on_virtual.py within \(timeout)\(diagnostics)"))
        }
        defer { timer.cancel() }
        let event = try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Event, any Error>) in
            let outcome = state.withLock { state -> Result<Event, any Error>? in
                if let index = state.events.indices.first(where: { !state.taken[$0] && state.events[$0]["event"] == name }) {
                    state.taken[index] = true
                    return .success(state.events[index])
                }
                if state.ended { return .failure(InteropWaitError(description: "host_on_virtual.py ended before \"\(name)\"")) }
                state.waiters[key] = (name, continuation)
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
        if let failure = state.withLock({ $0.events.first { $0["event"] == "error" } }) {
            throw InteropWaitError(description: "host_on_virtual.py failed: \(failure["message"] ?? "?")\(diagnostics)")
        }
        return event
    }

    /// The events so far and the end of the log.
    var diagnostics: String {
        let events = state.withLock { $0.events.map { "\($0)" } }.suffix(10).joined(separator: "\n  ")
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)).map { $0.split(separator: "\n").suffix(30).joined(separator: "\n  ") } ?? ""
        return "\nlast events:\n  \(events)\nlog \(logPath):\n  \(log)"
    }

    /// Ends the process: `quit` and end of stdin, then SIGTERM, then SIGKILL. Idempotent.
    func stop() {
        let first = stopped.withLock { stopped -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        try? input.write(contentsOf: Data("quit\n".utf8))
        try? input.close()
        for signal in [0, SIGTERM, SIGKILL] {
            if signal != 0, process.isRunning { kill(process.processIdentifier, signal) }
            let deadline = ContinuousClock.now + .seconds(3)
            while process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
            if !process.isRunning { break }
        }
        if process.isRunning { process.waitUntilExit() }
    }
}
