@testable import Bluejay
import BluetoothSimulator
import Foundation
import Synchronization
import Testing

@Suite("Peripherals declared in a test", .timeLimit(.minutes(1)))
struct DeclarationTests {
    static let service = ServiceIdentifier(uuid: "FFF0")
    static let counter = CharacteristicIdentifier(uuid: "FFF1", service: service)
    static let setting = CharacteristicIdentifier(uuid: "FFF2", service: service)
    static let events = CharacteristicIdentifier(uuid: "FFF3", service: service)
    static let slow = CharacteristicIdentifier(uuid: "FFF4", service: service)

    /// A counter that counts its reads, a setting that takes values 0…9 and announces each
    /// change on `events`, and a slow characteristic.
    static func declaration() -> SimulatedPeripheral {
        let reads = Mutex(0)
        return SimulatedPeripheral(name: "Gadget", advertisingInterval: .milliseconds(40),
                                   additionalAdvertisingFields: [.manufacturerSpecificData(companyID: 0xFFFF, data: [1, 2])], services: [
            SimulatedService(uuid: "FFF0", characteristics: [
                SimulatedCharacteristic(uuid: "FFF1", properties: [.read], onRead: { _ in
                    let count = reads.withLock { count -> UInt8 in
                        count += 1
                        return UInt8(truncatingIfNeeded: count)
                    }
                    return .value([count])
                }),
                SimulatedCharacteristic(uuid: "FFF2", properties: [.read, .write], value: [5], maximumValueLength: 1, onWrite: { write in
                    guard let value = write.value.first, value <= 9 else { return .error(ATTErrorCode(rawValue: 0x81)) }
                    Task { try? await write.device.notify([write.storedValue.first ?? 0, value], on: "FFF3") }
                    return .success
                }),
                SimulatedCharacteristic(uuid: "FFF3", properties: [.notify]),
                SimulatedCharacteristic(uuid: "FFF4", properties: [.read], value: Array("slow".utf8), responseDelay: .milliseconds(300)),
            ]),
        ])
    }

    @Test("Handlers answer reads and writes; a write notifies another characteristic; advertising carries the extra fields")
    func handlers() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            let recorder = EventRecorder(device)
            var discovered: ScanDiscovery?
            for try await event in bluejay.scan(serviceIdentifiers: [Self.service]) {
                discovered = event.discovery
                break
            }
            #expect(discovered?.peripheralIdentifier == device.peripheralIdentifier)
            #expect(discovered?.localName == "Gadget")
            #expect(discovered?.manufacturerData == Data([0xFF, 0xFF, 1, 2]))
            try await waitUntil("the scan stops") { !bluejay.isScanning }
            try await connect(bluejay, to: device)

            let first: UInt8 = try await bluejay.read(from: Self.counter)
            let second: UInt8 = try await bluejay.read(from: Self.counter)
            #expect((first, second) == (1, 2))

            let changes = try await bluejay.listen(to: Self.events) as ValueStream<Data>
            try await bluejay.write(to: Self.setting, value: UInt8(7))
            var iterator = changes.makeAsyncIterator()
            #expect(try await iterator.next() == Data([5, 7]), "old and new value")
            let setting: UInt8 = try await bluejay.read(from: Self.setting)
            #expect(setting == 7)
            await #expect(throws: BluejayError.self) { try await bluejay.write(to: Self.setting, value: UInt8(12)) }
            try await recorder.wait(for: "the refused write") { event in
                if case let .written(_, uuid, value, _, .error(code)) = event { return uuid == "FFF2" && value == [12] && code.rawValue == 0x81 }
                return false
            }
            #expect(await device.value(of: "FFF2") == [7])
            try await bluejay.disconnect()
            try await recorder.wait(for: "the disconnection") { if case .disconnected = $0 { return true } else { return false } }
        }
    }

    @Test("A response delay slows the answer; one longer than the operation timeout is a typed timeout")
    func delays() async throws {
        // Simulated time on both sides: the peripheral's delays on one manual clock, Bluejay's
        // operation limit on another; each moves only when the test says.
        let peripheralClock = ManualClock()
        let bluejayClock = ManualClock()
        try await withSimulator(operationTimeout: 1.5, simulatorClock: .manual(peripheralClock), bluejayClock: .manual(bluejayClock)) { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            try await connect(bluejay, to: device)
            let slowRead = Task { try await bluejay.read(from: Self.slow) as String }
            // The peripheral holds the answer for its 300 ms delay.
            try await peripheralClock.waitForSleepingTasks(1)
            peripheralClock.advance(by: .milliseconds(299))
            #expect(peripheralClock.sleepingTaskCount == 1, "still delaying at 299 ms")
            peripheralClock.advance(by: .milliseconds(1))
            #expect(try await slowRead.value == "slow")

            device.setResponseDelay(.milliseconds(2200), for: "FFF4")
            let timedOut = Task { try await bluejay.read(from: Self.slow) as String }
            try await peripheralClock.waitForSleepingTasks(1)
            // Bluejay's limit passes while the peripheral still delays.
            bluejayClock.advance(by: .milliseconds(1500))
            do {
                _ = try await timedOut.value
                Issue.record("the read did not time out")
            } catch let BluejayError.timedOut(operation, after) {
                #expect(operation.contains("FFF4"))
                #expect(after == .milliseconds(1500))
            }
            // The bearer answers the abandoned read late; the next request still works.
            device.setResponseDelay(.zero, for: "FFF4")
            peripheralClock.advance(by: .milliseconds(2200))
            let again: String = try await bluejay.read(from: Self.slow)
            #expect(again == "slow")
            #expect(bluejay.isConnected)
            try await bluejay.disconnect()
            await expectIdle(bluejay)
        }
    }

    @Test("Injected ATT errors surface as BluejayError.attError with the code; then requests succeed again")
    func injectedATTErrors() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            try await connect(bluejay, to: device)
            device.failNextRequests(.attError(.readNotPermitted), on: "FFF2", kinds: .read)
            device.failNextRequests(.attError(ATTErrorCode(rawValue: 0x80)), count: 2, kinds: .write)
            #expect(device.pendingInjectedFailures == 3)

            let read: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Self.setting) { done($0) } }
            guard case let .failure(.attError(code, operation, _)) = read else {
                Issue.record("expected an ATT error, got \(read)")
                return
            }
            #expect(code == .readNotPermitted)
            #expect(operation.contains("FFF2"))
            for _ in 0..<2 {
                let write: WriteResult = try await callback { done in bluejay.write(to: Self.setting, value: UInt8(3)) { done($0) } }
                guard case let .failure(.attError(code, _, _)) = write else {
                    Issue.record("expected an ATT error, got \(write)")
                    return
                }
                #expect(code.rawValue == 0x80)
            }
            #expect(device.pendingInjectedFailures == 0)
            try await bluejay.write(to: Self.setting, value: UInt8(3))
            let value: UInt8 = try await bluejay.read(from: Self.setting)
            #expect(value == 3)
            try await bluejay.disconnect()
            await expectIdle(bluejay)
        }
    }

    @Test("A second peripheral with the same name gets another address; both can be reached")
    func twoPeripherals() async throws {
        try await withSimulator { simulator, bluejay in
            let first = try await simulator.add(Self.declaration())
            let second = try await simulator.add(Self.declaration())
            #expect(first.address != second.address)
            #expect(simulator.devices.count == 2)
            try await connect(bluejay, to: second)
            let count: UInt8 = try await bluejay.read(from: Self.counter)
            #expect(count == 1, "each declaration's handler keeps its own count")
            try await bluejay.disconnect()
            await simulator.remove(second)
            #expect(simulator.devices.count == 1)
            try await connect(bluejay, to: first)
            try await bluejay.disconnect()
        }
    }
}
