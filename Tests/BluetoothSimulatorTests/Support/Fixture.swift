@testable import Bluejay
import BluetoothSimulator
import Foundation
import Synchronization
import Testing

/// A simulator and a Bluejay started on its central controller; both are always shut down.
/// `simulatorClock` runs the peripherals' timers (notification rates, response delays) and
/// `bluejayClock` Bluejay's and its host's (operation limits, ATT and connect timeouts): a
/// test whose subject is one of those moves a manual clock instead of waiting.
/// Not a `TwoDevices`: the subject is the Bluejay app API (which owns its host) against the simulator's devices.
func withSimulator(timeScale: Double = 1, operationTimeout: TimeInterval = 15,
                   simulatorClock: BluetoothClock = .continuous, bluejayClock: BluetoothClock = .continuous,
                   configure: (inout StartOptions) -> Void = { _ in },
                   _ body: (Simulator, Bluejay) async throws -> Void) async throws {
    let simulator = Simulator(timeScale: timeScale, seed: 7, clock: simulatorClock)
    var options = StartOptions(transport: .transport(simulator.centralTransport()), operationTimeout: .seconds(operationTimeout))
    options.hostConfiguration.clock = bluejayClock
    configure(&options)
    let bluejay = Bluejay()
    bluejay.start(mode: .new(options))
    do {
        try await bluejay.waitUntilReady()
        try await body(simulator, bluejay)
    } catch {
        await bluejay.stop()
        await simulator.shutdown()
        throw error
    }
    await bluejay.stop()
    await simulator.shutdown()
}

/// Connects with the async API and checks the result.
func connect(_ bluejay: Bluejay, to device: SimulatedDevice, timeout: TimeInterval = 15) async throws {
    let connected = try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(timeout))
    #expect(connected == device.peripheralIdentifier)
    #expect(bluejay.isConnected)
}

/// Nothing left hanging: not connected nor connecting, no listen, no request queued or
/// running, no background task, no scan. Bluejay settles right after the callbacks of a
/// disconnection (a running request ends just after its failure was delivered; listens end
/// once the disconnect handler answered), so this waits up to `timeout` for it, then checks.
func expectIdle(_ bluejay: Bluejay, listeningTo characteristics: [CharacteristicIdentifier] = [], timeout: Duration = .seconds(20),
                sourceLocation: SourceLocation = #_sourceLocation) async {
    let settled: @Sendable () -> Bool = {
        !bluejay.isConnected && !bluejay.isConnecting && !bluejay.isDisconnecting && !bluejay.isScanning
            && !bluejay.isRunningBackgroundTask && bluejay.runner.count == 0
            && characteristics.allSatisfy { !bluejay.isListening(to: $0) }
    }
    try? await waitUntil("Bluejay to settle", timeout: timeout) { settled() }
    #expect(!bluejay.isConnected, sourceLocation: sourceLocation)
    #expect(!bluejay.isConnecting, sourceLocation: sourceLocation)
    #expect(!bluejay.isDisconnecting, sourceLocation: sourceLocation)
    #expect(!bluejay.isScanning, sourceLocation: sourceLocation)
    #expect(!bluejay.isRunningBackgroundTask, sourceLocation: sourceLocation)
    #expect(bluejay.connectedPeripheral == nil, sourceLocation: sourceLocation)
    #expect(bluejay.runner.count == 0, "requests left in the queue: \(bluejay.runner.kinds)", sourceLocation: sourceLocation)
    for characteristic in characteristics {
        #expect(!bluejay.isListening(to: characteristic), "still listening to \(characteristic)", sourceLocation: sourceLocation)
    }
}

/// Records a simulated device's events from now on.
final class EventRecorder: Sendable {
    private let events = Collected<SimulatedDeviceEvent>()
    private let task: Task<Void, Never>

    init(_ device: SimulatedDevice) {
        let stream = device.events()
        let events = self.events
        task = Task {
            for await event in stream { events.append(event) }
        }
    }

    deinit { task.cancel() }

    var all: [SimulatedDeviceEvent] { events.all }

    /// Waits until an event matches.
    @discardableResult
    func wait(for what: String, timeout: Duration = .seconds(30),
              _ predicate: @escaping @Sendable (SimulatedDeviceEvent) -> Bool) async throws -> SimulatedDeviceEvent {
        var found: SimulatedDeviceEvent?
        try await waitUntil(what, timeout: timeout) {
            found = all.first(where: predicate)
            return found != nil
        }
        return try #require(found)
    }
}

/// Collects what Bluejay's observers and the disconnect handler are told.
final class ObserverLog: ConnectionObserver, DisconnectHandler, Sendable {
    private let entries = Mutex<[String]>([])
    private let errors = Mutex<[BluejayError?]>([])
    let answer: AutoReconnectMode

    init(answer: AutoReconnectMode = .noChange) {
        self.answer = answer
    }

    var all: [String] { entries.withLock { $0 } }
    func count(_ entry: String) -> Int { all.filter { $0 == entry }.count }
    var disconnectErrors: [BluejayError?] { errors.withLock { $0 } }

    func bluetoothAvailable(_ available: Bool) { entries.withLock { $0.append("available \(available)") } }
    func connected(to peripheral: PeripheralIdentifier) { entries.withLock { $0.append("connected") } }
    func disconnected(from peripheral: PeripheralIdentifier) { entries.withLock { $0.append("disconnected") } }

    func didDisconnect(from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool) -> AutoReconnectMode {
        // Bluejay's disconnection errors are always BluejayError; anything else is recorded as nil
        // plus an entry the tests' exact log comparisons would show.
        if let error, !(error is BluejayError) { entries.withLock { $0.append("non-Bluejay error \(error)") } }
        errors.withLock { $0.append(error as? BluejayError) }
        entries.withLock { $0.append("handler willReconnect=\(autoReconnect)") }
        return answer
    }
}
