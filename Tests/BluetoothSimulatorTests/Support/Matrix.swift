@testable import Bluejay
import BluetoothCore
import BluetoothSimulator
import BluetoothTransport
import Foundation
import Synchronization
import Testing

/// The world of ``FaultMatrixTests``: a simulated peripheral, and a Bluejay on an
/// ``InterposedTransport`` to the central's controller, connected and listening to a counter.
/// Bluejay's and its host's timers run on ``clock``, the peripheral's on ``simulatorClock``:
/// both move only when a test moves them.
final class Matrix: Sendable {
    static let serviceA = BluetoothUUID("7E570001-0000-1000-8000-00805F9B34FB")
    static let serviceB = BluetoothUUID("7E570002-0000-1000-8000-00805F9B34FB")
    static let counterUUID = BluetoothUUID("7E570011-0000-1000-8000-00805F9B34FB")
    static let indicatorUUID = BluetoothUUID("7E570012-0000-1000-8000-00805F9B34FB")
    static let longUUID = BluetoothUUID("7E570013-0000-1000-8000-00805F9B34FB")
    static let otherUUID = BluetoothUUID("7E570014-0000-1000-8000-00805F9B34FB")
    static let heldUUID = BluetoothUUID("7E570015-0000-1000-8000-00805F9B34FB")
    static let shortUUID = BluetoothUUID("7E570021-0000-1000-8000-00805F9B34FB")

    static let counter = CharacteristicIdentifier(uuid: counterUUID, service: ServiceIdentifier(uuid: serviceA))
    static let indicator = CharacteristicIdentifier(uuid: indicatorUUID, service: ServiceIdentifier(uuid: serviceA))
    static let long = CharacteristicIdentifier(uuid: longUUID, service: ServiceIdentifier(uuid: serviceA))
    static let other = CharacteristicIdentifier(uuid: otherUUID, service: ServiceIdentifier(uuid: serviceA))
    /// Its reads are answered only once ``gate`` opens.
    static let held = CharacteristicIdentifier(uuid: heldUUID, service: ServiceIdentifier(uuid: serviceA))
    /// In a service of its own, so that reading it first needs discovery.
    static let short = CharacteristicIdentifier(uuid: shortUUID, service: ServiceIdentifier(uuid: serviceB))

    /// 300 octets: a long read and a long write at the ATT MTU of 23 the matrix uses.
    static let longValue = Data((0..<300).map { UInt8($0 % 256) })
    /// Bluejay's limit of each operation. Two of them exceed the 30 s ATT transaction
    /// timeout, so that an operation queued behind a timed-out one meets that timeout.
    static let operationLimit: Duration = .seconds(20)
    /// The host's HCI command timeout (the default).
    static let commandTimeout: Duration = .seconds(5)

    static func declaration(gate: TestGate) -> SimulatedPeripheral {
        SimulatedPeripheral(name: "Matrix", services: [
            SimulatedService(uuid: serviceA, characteristics: [
                SimulatedCharacteristic(uuid: counterUUID, properties: [.notify], value: [0, 0, 0, 0]),
                SimulatedCharacteristic(uuid: indicatorUUID, properties: [.indicate], value: [0, 0, 0, 0]),
                SimulatedCharacteristic(uuid: longUUID, properties: [.read, .write], value: Array(longValue)),
                SimulatedCharacteristic(uuid: otherUUID, properties: [.read], value: [0x05]),
                SimulatedCharacteristic(uuid: heldUUID, properties: [.read], value: [0x07], onRead: { read in
                    try? await gate.wait()
                    return .value(read.storedValue)
                }),
            ]),
            SimulatedService(uuid: serviceB, characteristics: [
                SimulatedCharacteristic(uuid: shortUUID, properties: [.read], value: [0x01]),
            ]),
        ])
    }

    let simulator: Simulator
    let simulatorClock: ManualClock
    let device: SimulatedDevice
    /// Bluejay's clock.
    let clock: ManualClock
    /// The time on ``clock`` when the matrix was set up.
    let start: Duration
    let log: ObserverLog
    /// Holds the answers to reads of ``held`` until it opens.
    let gate: TestGate
    /// Every counter value the listen received, in order.
    let counterValues = AwaitableLog<UInt32>()
    private let current: Mutex<(bluejay: Bluejay, transport: InterposedTransport)>
    private let nextNumber = Mutex<UInt32>(1)

    var bluejay: Bluejay { current.withLock { $0.bluejay } }
    var transport: InterposedTransport { current.withLock { $0.transport } }

    private init(simulator: Simulator, simulatorClock: ManualClock, device: SimulatedDevice, clock: ManualClock,
                 bluejay: Bluejay, transport: InterposedTransport, log: ObserverLog, gate: TestGate) {
        self.gate = gate
        self.simulator = simulator
        self.simulatorClock = simulatorClock
        self.device = device
        self.clock = clock
        start = clock.now
        self.log = log
        current = Mutex((bluejay, transport))
    }

    static func make() async throws -> Matrix {
        let simulatorClock = ManualClock()
        let simulator = Simulator(timeScale: 10, seed: 7, clock: .manual(simulatorClock))
        let gate = TestGate()
        let device = try await simulator.add(declaration(gate: gate))
        let clock = ManualClock()
        let transport = InterposedTransport(simulator.centralTransport())
        let log = ObserverLog()
        let matrix = Matrix(simulator: simulator, simulatorClock: simulatorClock, device: device, clock: clock,
                            bluejay: Bluejay(), transport: transport, log: log, gate: gate)
        try await matrix.startBluejay(matrix.bluejay, transport: transport)
        return matrix
    }

    private func options(_ transport: InterposedTransport) -> StartOptions {
        var options = StartOptions(transport: .transport(transport), operationTimeout: .seconds(Self.operationLimit.bluejayTimeInterval))
        options.hostConfiguration.clock = .manual(clock)
        options.hostConfiguration.preferredATTMTU = 23
        options.hostConfiguration.commandTimeout = Self.commandTimeout
        return options
    }

    /// Starts `bluejay`, connects, and listens to the counter until a first value arrives.
    private func startBluejay(_ bluejay: Bluejay, transport: InterposedTransport) async throws {
        bluejay.register(connectionObserver: log)
        bluejay.registerDisconnectHandler(handler: log)
        bluejay.start(mode: .new(options(transport)))
        try await bluejay.waitUntilReady()
        _ = try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))
        bluejay.listen(to: Self.counter) { [counterValues] (result: ReadResult<Data>) in
            if case let .success(data) = result, data.count == 4 {
                counterValues.append(data.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }.littleEndian)
            }
        }
        try await expectNumberedNotifications(count: 2)
    }

    /// Stops Bluejay and starts a new one on a new transport (after the old one broke).
    func restart() async throws {
        await bluejay.stop()
        let transport = InterposedTransport(simulator.centralTransport())
        let bluejay = Bluejay()
        current.withLock { $0 = (bluejay, transport) }
        try await startBluejay(bluejay, transport: transport)
    }

    func shutdown() async {
        await bluejay.stop()
        await simulator.shutdown()
    }

    // MARK: Steps

    /// Waits until Bluejay has reconnected on its own and the peripheral sees the counter's
    /// subscription again.
    func waitForReconnection() async throws {
        try await waitUntil("the reconnection", timeout: .seconds(20)) { [self] in log.count("connected") >= 2 && bluejay.isConnected }
        try await waitUntil("the listen restored") { [self] in await !device.subscribers(of: Self.counterUUID).isEmpty }
    }

    /// Sends `count` numbered notifications (numbers never sent before) and expects exactly
    /// them, in order, once each, after the values received so far.
    func expectNumberedNotifications(count: Int = 20, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await waitUntil("the subscription") { [self] in await !device.subscribers(of: Self.counterUUID).isEmpty }
        let first = nextNumber.withLock { number -> UInt32 in
            defer { number += UInt32(count) }
            return number
        }
        let numbers = (0..<UInt32(count)).map { first + $0 }
        let before = counterValues.count
        for number in numbers {
            let reached = try await device.notify(withUnsafeBytes(of: number.littleEndian) { Array($0) }, on: Self.counterUUID)
            #expect(reached.count == 1, "notification \(number) reached \(reached.count) centrals", sourceLocation: sourceLocation)
        }
        let values = await counterValues.wait(forCount: before + count, timeout: .seconds(10)) ?? counterValues.items
        #expect(Array(values.dropFirst(before)) == numbers, "none lost, none repeated, in order", sourceLocation: sourceLocation)
    }

    /// What a procedure's fault waits for, and the procedure: it reports how it ended
    /// (`nil` when it succeeded).
    func prepare(_ procedure: FaultMatrixTests.Procedure) async throws
        -> (trigger: (opcodes: Set<UInt8>, occurrence: Int), run: @Sendable (AwaitableLog<BluejayError?>) -> Void) {
        let bluejay = self.bluejay
        switch procedure {
        case .discovery:
            // Find By Type Value, Read By Type, Find Information, Read By Group Type.
            return (([0x06, 0x08, 0x04, 0x10], 1), { outcome in
                bluejay.read(from: Self.short) { (result: ReadResult<Data>) in outcome.append(result.failure) }
            })
        case .read:
            _ = try await bluejay.read(from: Self.short) as Data
            return (([0x0A], 1), { outcome in
                bluejay.read(from: Self.short) { (result: ReadResult<Data>) in outcome.append(result.failure) }
            })
        case .longRead:
            // The second Read Blob Request: well inside the long read.
            return (([0x0C], 2), { outcome in
                bluejay.read(from: Self.long) { (result: ReadResult<Data>) in outcome.append(result.failure) }
            })
        case .longWrite:
            // The third Prepare Write Request.
            return (([0x16], 3), { outcome in
                bluejay.write(to: Self.long, value: Data(Self.longValue.reversed())) { (result: WriteResult) in
                    if case let .failure(error) = result { outcome.append(error) } else { outcome.append(nil) }
                }
            })
        case .cccdWrite:
            // The Write Request to the indicator's Client Characteristic Configuration.
            return (([0x12], 1), { outcome in
                let reported = Mutex(false)
                bluejay.listen(to: Self.indicator) { (result: ReadResult<Data>) in
                    guard reported.withLock({ done in defer { done = true }; return !done }) else { return }
                    outcome.append(result.failure)
                }
            })
        case .indication:
            let first = Mutex(true)
            let outcomeBox = Mutex<AwaitableLog<BluejayError?>?>(nil)
            bluejay.listen(to: Self.indicator) { (result: ReadResult<Data>) in
                guard let outcome = outcomeBox.withLock({ $0 }), first.withLock({ done in defer { done = false }; return done }) else { return }
                outcome.append(result.failure)
            }
            let device = self.device
            try await waitUntil("the indicator's subscription") { await !device.subscribers(of: Self.indicatorUUID).isEmpty }
            // The Handle Value Confirmation.
            return (([0x1E], 1), { outcome in
                outcomeBox.withLock { $0 = outcome }
                Task { _ = try? await device.notify([1, 0, 0, 0], on: Self.indicatorUUID) }
            })
        }
    }
}

/// A matrix, always shut down.
func withMatrix(_ body: (Matrix) async throws -> Void) async throws {
    let matrix = try await Matrix.make()
    do {
        try await body(matrix)
    } catch {
        await matrix.shutdown()
        throw error
    }
    await matrix.shutdown()
}

extension Result where Failure == BluejayError {
    /// The error, `nil` on success.
    var failure: BluejayError? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
