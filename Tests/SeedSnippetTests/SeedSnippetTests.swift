import Bluejay
import BluetoothSimulator
import Foundation
import Testing
import TestSupport

/// The seeds' Bluejay snippets (``HeartSensorController``, ``SeedModels``), compiled in
/// Swift 5 language mode as a porting app is, and run on the simulator against a heart-rate
/// sensor with the seeds' other characteristics (``seedPeripheral()``).
///
/// The snippets report through `debugPrint`, which this module routes to `seedTranscript`;
/// the suite is serialized so that each test reads its own lines.
@Suite("Seed snippets (Swift 5 mode) on the simulator", .serialized, .timeLimit(.minutes(1)))
struct SeedSnippetTests {
    /// Waits until a line of this test (from `start` on) satisfies `predicate`.
    func waitForLine(after start: Int, _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                     _ predicate: @escaping @Sendable (String) -> Bool) async {
        let lines = await seedTranscript.wait(timeout: .seconds(20)) { $0.dropFirst(start).contains(where: predicate) }
        #expect(lines != nil, "no line \(what) in \(Array(seedTranscript.items.dropFirst(start)))", sourceLocation: sourceLocation)
    }

    @Test("Bluejay 0.8.4's README, ported: scan, connect, read, write, listen, background tasks, disconnect handler")
    func heartSensorApp() async throws {
        let start = seedTranscript.count
        let simulator = Simulator()
        let device = try await simulator.add(seedPeripheral())

        let bluejay = Bluejay()
        let controller = HeartSensorController(bluejay: bluejay)
        let options = StartOptions(
          enableBluetoothAlert: true,
          backgroundRestore: .disable,
          transport: .transport(simulator.centralTransport()), // port: the controller to use
          callbackQueue: controller.queue)                     // port: the app's queue (iOS: the main thread)
        bluejay.start(mode: .new(options))
        bluejay.register(connectionObserver: controller)
        bluejay.registerDisconnectHandler(handler: controller)
        bluejay.register(serviceObserver: controller)
        await waitForLine(after: start, "bluetooth available") { $0 == "bluetooth available: true" }

        // Basic scanning, then connecting to the selected sensor.
        controller.scan()
        #expect(await eventually { bluejay.isScanning && !controller.discoveriesOnQueue(bluejay).isEmpty })
        let selectedSensor = try #require(controller.discoveriesOnQueue(bluejay).first?.peripheralIdentifier)
        #expect(selectedSensor == device.peripheralIdentifier)
        bluejay.stopScanning()
        await waitForLine(after: start, "scan stopped") { $0 == "Scan stopped without error." }
        controller.connect(selectedSensor)
        await waitForLine(after: start, "connected") { $0 == "Connection attempt to: \(selectedSensor.description) is successful" }
        #expect(bluejay.isConnected)
        #expect(bluejay.connectedPeripheral == device.peripheralIdentifier)

        // Read, write, a Transmittable model, listen: each in the FIFO queue.
        controller.readSensorLocation()
        controller.writeSensorLocation()
        await waitForLine(after: start, "write") { $0 == "Write to sensor location is successful." }
        #expect(controller.onQueue(bluejay) { $0.sensorLocationText } == "Chest")
        #expect(await device.value(of: "2A38") == [2])
        controller.writeCoffee()
        await waitForLine(after: start, "coffee") { $0 == "Coffee written." }
        #expect(await device.value(of: "2A38") == [UInt8(CoffeeEnum.espresso.rawValue)])

        controller.listenToHeartRate()
        #expect(await eventually { await !device.subscribers(of: "2A37").isEmpty })
        _ = try await device.notify(HeartRateSensor.measurementBytes(heartRate: 72), on: "2A37")
        _ = try await device.notify(HeartRateSensor.measurementBytes(heartRate: 310), on: "2A37")
        await waitForLine(after: start, "310 bpm") { $0 == "heart rate 310" }
        #expect(controller.onQueue(bluejay) { $0.heartRate?.measurement } == 310)
        #expect(seedTranscript.items.dropFirst(start).contains("heart rate 72"))

        // The background task of the README: flush, end listens, two writeAndListen.
        controller.enteredPassword = userPassword
        controller.authenticate()
        await waitForLine(after: start, "admin result") { $0.hasPrefix("Is admin authenticated") || $0.hasPrefix("Background task failed") }
        let lines = Array(seedTranscript.items.dropFirst(start))
        #expect(lines.contains("Flushed buffered data on the user auth characteristic."))
        #expect(lines.contains("Flushed buffered data on the admin auth characteristic."))
        #expect(lines.contains("Is user authenticated: true"), "\(lines)")
        #expect(lines.contains("Is admin authenticated: false"), "\(lines)")

        // writeAndAssemble: the answer comes in 3-byte pieces.
        controller.readFirmware()
        await waitForLine(after: start, "firmware") { $0.hasPrefix("firmware read") }
        #expect(controller.onQueue(bluejay) { $0.firmware } == firmwareString)

        // The connection states the README lists.
        #expect(bluejay.isBluetoothAvailable && !bluejay.isBluetoothStateUpdateImminent && !bluejay.isConnecting)
        #expect(!bluejay.isDisconnecting && bluejay.shouldAutoReconnect && !bluejay.isScanning && bluejay.hasStarted)
        #expect(bluejay.defaultWarningOptions == WarningOptions() && !bluejay.isBackgroundRestorationEnabled)

        // An unexpected disconnection: the handler gets an `Error?` (a BluejayError) and turns auto-reconnect off.
        await device.dropAllLinks()
        await waitForLine(after: start, "handler") { $0.hasPrefix("handler: unexpected") }
        #expect(seedTranscript.items.dropFirst(start).contains { $0.hasPrefix("handler: unexpected") && $0.hasSuffix("willReconnect=true") })
        #expect(await eventually { !bluejay.shouldAutoReconnect && !bluejay.isConnected && !bluejay.isConnecting })

        // ScanAction.connect in the README's two-argument form, then a queued and an immediate disconnect.
        controller.scanAndConnect()
        await waitForLine(after: start, "scan connect") { $0 == "Scan connected to \(selectedSensor.description)" }
        #expect(bluejay.isConnected)
        controller.cancelButKeepConnection()
        #expect(bluejay.isConnected)
        controller.disconnectNow()
        await waitForLine(after: start, "expected disconnection") { $0 == "handler: expected willReconnect=false" }

        // Monitoring: duplicates, expiry, a duration.
        controller.monitor()
        #expect(await eventually { !controller.discoveriesOnQueue(bluejay).isEmpty })
        bluejay.stopScanning()
        await waitForLine(after: start, "monitor stopped") { $0 == "Monitor stopped without error." }

        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("Bluejay 0.8.4's background restoration set-up, ported: the AppDelegate's restorers")
    func backgroundRestorationSetUp() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("seed-restore-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let simulator = Simulator()
        let device = try await simulator.add(seedPeripheral())
        let appDelegate = AppDelegate()
        #expect(appDelegate.application(directory: directory, transport: .transport(simulator.centralTransport())))
        let bluejay = appDelegate.bluejay
        try await bluejay.waitUntilReady()
        #expect(bluejay.isBackgroundRestorationEnabled)

        // With a restore identifier the connected peripheral is saved for the next process.
        try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))
        let stateFile = directory.appendingPathComponent("com.steamclock.bluejayHeartSensorDemo.json")
        #expect(await eventually { FileManager.default.fileExists(atPath: stateFile.path) })
        // The restorers compile as the README prints them and answer as it says.
        #expect(appDelegate.didReceiveUnhandledListen(from: device.peripheralIdentifier, on: heartRate, with: nil) == .promiseRestoration)
        if case .continue = appDelegate.didFailToRestoreConnection(to: device.peripheralIdentifier, error: BluejayError.cancelled) {} else {
            Issue.record("expected .continue")
        }
        _ = try await bluejay.disconnect()
        await bluejay.stop()
        await simulator.shutdown()
    }
}

extension HeartSensorController {
    /// Reads the controller's state on Bluejay's callback queue, where the snippets change it.
    func onQueue<T>(_ bluejay: Bluejay, _ read: (HeartSensorController) -> T) -> T {
        queue.sync { read(self) }
    }

    func discoveriesOnQueue(_ bluejay: Bluejay) -> [ScanDiscovery] { onQueue(bluejay) { $0.discoveries } }
}

@Suite("Bluejay 0.7's spellings (Swift 5 mode) on the simulator", .timeLimit(.minutes(1)))
struct Bluejay07SpellingTests {
    @Test("register(observer:), restoreListen, flushListen(idleWindow:), .enable(id), .enableWithListenRestorer, Peripheral")
    func spellings() async throws {
        let simulator = Simulator()
        let device = try await simulator.add(seedPeripheral())
        let queue = DispatchQueue(label: "seed.0.7")
        let observer = Bluejay07Observer()
        var options = StartOptions.bluejayDefault
        options.transport = .transport(simulator.centralTransport())
        options.callbackQueue = queue
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options))
        try await bluejay.waitUntilReady()

        let scenario: any Bluejay07Scenario = Bluejay07Port(observer: observer)
        let outcome = try await scenario.run(simulator: simulator, device: device, bluejay: bluejay, queue: queue)
        #expect(outcome.restoredValue == 72)
        #expect(outcome.flushed)
        #expect(outcome.enableIdentifier == "com.steamclock.bluejay")
        #expect(outcome.enableWithListenRestorerIdentifier == "com.steamclock.bluejay")
        #expect(outcome.enableWithListenRestorerHasRestorer)
        // The observer registered with 0.7's name was told of the connection at once.
        let peripheral = device.peripheralIdentifier
        #expect(queue.sync { observer.connections } == ["connected \(peripheral.description)"])

        _ = try await bluejay.disconnect()
        #expect(await eventually { queue.sync { observer.connections }.count == 2 })
        await bluejay.stop()
        await simulator.shutdown()
    }
}
