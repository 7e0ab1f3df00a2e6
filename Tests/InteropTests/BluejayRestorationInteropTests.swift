import Bluejay
import Foundation
import Synchronization
import Testing

/// Settings handed from the restoration test to the second process it starts.
enum RestorationChild {
    static let flag = "BLUEJAY_RESTORATION_CHILD"
    static let peripheral = "BLUEJAY_RESTORATION_PERIPHERAL"
    static let identifier = "BLUEJAY_RESTORATION_ID"
    static let readyMarker = "BLUEJAY-RESTORATION-CHILD-READY"
    static var isChild: Bool { ProcessInfo.processInfo.environment[flag] == "1" }
}

extension InteropSuites.BluejayInteropTests {
    @Suite("Restoration (README: State Restoration, Listen Restoration)")
    struct Restoration {
        @Test("Listens survive an auto-reconnect: enabled again, values go to the same callback")
        func listenAfterReconnect() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                try await connect(bluejay, to: peer, rig: rig)
                let values = Collected<Int>()
                bluejay.listen(to: Peer.heartRate) { (result: ReadResult<HeartRateMeasurement>) in
                    if case let .success(heartRate) = result { values.append(heartRate.measurement) }
                }
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
                _ = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } } as ReadResult<UInt8>
                try await rig.request(.notify(uuid: "2A37", count: 1, value: [0x00, 70]))
                try await waitUntil("before") { values.all == [70] }

                try await rig.request(.disconnect())
                try await rig.waitForEvent(named: "subscribed", matching: { $0.string("uuid") == "2A37" && $0.bool("notify") == true },
                                           timeout: .seconds(20))
                #expect(bluejay.isListening(to: Peer.heartRate))
                try await rig.request(.notify(uuid: "2A37", count: 1, value: [0x00, 71]))
                try await waitUntil("after the reconnection") { values.all == [70, 71] }
            }
        }

        @Test("A restored listen without a callback goes to the ListenRestorer, again after an auto-reconnect, until stopListen")
        func unhandledListenAfterReconnect() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-restore-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let recorder = Recorder()
            try await withBumbleRig(arguments: ["--plugin", "bluejay_auth"]) { rig in
                let peer = try rig.peripheral().identifier()
                // What a previous process left: connected to the peer, listening to the battery level.
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                let record = """
                {"version": 1, "peripheral": "\(peer.stringValue)", "listens": [{"uuid": "2A19", "service": "180F"}]}
                """
                try Data(record.utf8).write(to: directory.appendingPathComponent("bluejay.interop.json"))
                let bluejay = Bluejay()
                let config = BackgroundRestoreConfig(restoreIdentifier: "bluejay.interop", backgroundRestorer: recorder,
                                                     listenRestorer: recorder, directory: directory)
                bluejay.start(mode: .new(StartOptions(backgroundRestore: .enable(config), transport: .specification(rig.transportSpecification))))
                try await using(bluejay) { bluejay in
                    try await waitUntil("restored", timeout: .seconds(20)) { recorder.events.all.contains("restored \(peer.address)") }
                    try await waitUntil("the restore callback") { recorder.events.all.contains("restore callback") }
                    #expect(bluejay.isBackgroundRestorationEnabled)
                    #expect(bluejay.isListening(to: Peer.batteryLevel))
                    try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A19" && $0.bool("notify") == true }
                    try await rig.request(.notify(uuid: "2A19", count: 1, value: [5]))
                    try await waitUntil("the listen restorer") { recorder.count("unhandled") == 1 }
                    #expect(recorder.events.all.contains("unhandled 2A19 [5]"))

                    try await rig.request(.disconnect())
                    try await rig.waitForEvent(named: "subscribed", matching: { $0.string("uuid") == "2A19" && $0.bool("notify") == true },
                                               timeout: .seconds(20))
                    try await rig.request(.notify(uuid: "2A19", count: 1, value: [6]))
                    try await waitUntil("the listen restorer after the reconnection") { recorder.count("unhandled") == 2 }
                    #expect(recorder.events.all.contains("unhandled 2A19 [6]"))

                    recorder.restoreAnswer.withLock { $0 = .stopListen }
                    try await rig.request(.notify(uuid: "2A19", count: 1, value: [7]))
                    try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A19" && $0.bool("notify") == false }
                    try await waitUntil("the listen ended") { !bluejay.isListening(to: Peer.batteryLevel) }
                }
            }
        }

        @Test("Restoration after a process restart: a second process reconnects, tells the restorers, and listens again")
        func restorationAfterProcessRestart() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-restart-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let restoreIdentifier = "com.example.heart-sensor"
            let stateFile = directory.appendingPathComponent("\(restoreIdentifier).json")
            try await withBumbleRig(arguments: ["--plugin", "bluejay_auth"]) { rig in
                let peer = try rig.peripheral().identifier()

                // 1. The first process: connects, listens to the heart rate, and is killed.
                let child = try ChildProcess.launchTestBinary(filter: "restorationChildProcess", environment: [
                    RestorationChild.flag: "1",
                    TransportProvider.environmentVariable: rig.transportSpecification,
                    "BLUEJAY_STATE_DIR": directory.path,
                    RestorationChild.identifier: restoreIdentifier,
                    RestorationChild.peripheral: peer.stringValue,
                ])
                try await using(child) { child in
                    try await waitUntil("the first process ready", timeout: .seconds(60)) { child.output.contains(RestorationChild.readyMarker) }
                    try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
                }
                // Shut down by SIGKILL: no cleanup, as when the system kills an app.
                try await rig.waitForEvent(named: "host_disconnected", timeout: .seconds(10))
                try await rig.waitForEvent(named: "disconnected", timeout: .seconds(10))
                let persisted = try String(contentsOf: stateFile, encoding: .utf8)
                #expect(persisted.contains(peer.stringValue) && persisted.contains("2A37"), "the killed process left \(persisted)")

                // 2. The second process (this one, with a new host on a new connection to the controller).
                let recorder = Recorder()
                let restoredValues = Collected<Int>()
                let bluejay = Bluejay()
                recorder.onUnhandledListen.withLock {
                    $0 = { characteristic, _ in
                        // Re-install the callback, then promise restoration (the README's pattern).
                        bluejay.listen(to: characteristic, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                            if case let .success(heartRate) = result { restoredValues.append(heartRate.measurement) }
                        }
                    }
                }
                let config = BackgroundRestoreConfig(restoreIdentifier: restoreIdentifier, backgroundRestorer: recorder, listenRestorer: recorder,
                                                     directory: directory)
                bluejay.start(mode: .new(StartOptions(enableBluetoothAlert: true, backgroundRestore: .enable(config),
                                                      transport: .specification(rig.transportSpecification))), connectionObserver: recorder)
                try await waitUntil("restored", timeout: .seconds(20)) { recorder.events.all.contains("restored \(peer.address)") }
                #expect(bluejay.connectedPeripheral == peer)
                #expect(recorder.events.all.firstIndex(of: "restored \(peer.address)").map { $0 > 0 } == true)
                try await waitUntil("the restore callback") { recorder.events.all.contains("restore callback") }
                try await rig.waitForEvent(named: "subscribed", matching: { $0.string("uuid") == "2A37" && $0.bool("notify") == true })
                try await rig.request(.notify(uuid: "2A37", count: 1, value: [0x00, 80]))
                try await waitUntil("the unhandled listen") { recorder.events.all.contains("unhandled 2A37 [0, 80]") }
                try await rig.request(.notify(uuid: "2A37", count: 2, start: 81))
                try await waitUntil("the restored callback") { restoredValues.all == [81, 82] }
                #expect(recorder.count("unhandled") == 1, "once a callback is installed, values go to it")

                // An expected disconnection clears the state: nothing to restore next time.
                await bluejay.stop()
                #expect(!FileManager.default.fileExists(atPath: stateFile.path))
            }
        }

        /// The first process of ``restorationAfterProcessRestart()``; runs only there.
        @Test("(child process of the restoration test)", .enabled(if: RestorationChild.isChild))
        func restorationChildProcess() async throws {
            let environment = ProcessInfo.processInfo.environment
            let peer = try #require(environment[RestorationChild.peripheral].flatMap(PeripheralIdentifier.init(string:)))
            let identifier = try #require(environment[RestorationChild.identifier])
            let recorder = Recorder()
            let bluejay = Bluejay()
            // Directory from BLUEJAY_STATE_DIR, controller from BLUEJAY_HCI: the defaults.
            let config = BackgroundRestoreConfig(restoreIdentifier: identifier, backgroundRestorer: recorder, listenRestorer: recorder)
            bluejay.start(mode: .new(StartOptions(backgroundRestore: .enable(config))))
            try await bluejay.waitUntilReady()
            try await bluejay.connect(peer, timeout: .seconds(15))
            bluejay.listen(to: Peer.heartRate) { (_: ReadResult<HeartRateMeasurement>) in }
            let _: UInt8 = try await bluejay.read(from: Peer.bodySensorLocation)
            // Straight to the descriptor: no stdio buffering between this line and the parent.
            FileHandle.standardOutput.write(Data((RestorationChild.readyMarker + "\n").utf8))
            // Killed here by the parent, never disconnecting.
            try await Task.sleep(for: .seconds(120))
        }
    }
}

/// A second process running this test binary with one test selected.
final class ChildProcess: Sendable {
    private let process: ManagedProcess<String>

    private init(process: ManagedProcess<String>) {
        self.process = process
    }

    static func launchTestBinary(filter: String, environment: [String: String]) throws -> ChildProcess {
        ChildProcess(process: try ManagedProcess.launch(
            name: "child test process",
            executable: URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            arguments: ["--testing-library", "swift-testing", "--filter", filter],
            environment: environment,
            input: .nullDevice,
            stopping: .kill,
            logName: "bluejay-child",
            parse: { $0 }
        ))
    }

    deinit {
        process.stop()
        try? FileManager.default.removeItem(atPath: process.logPath)
    }

    /// What it printed on stdout so far.
    var output: String { process.lines.joined(separator: "\n") }

    /// SIGKILL: the process ends without any cleanup, as when the system kills an app.
    /// Waits for it without blocking a thread of the cooperative pool.
    func shutdown() async {
        await process.shutdown()
    }
}
