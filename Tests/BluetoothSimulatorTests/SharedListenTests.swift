@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// LittleBluetooth's several listeners per characteristic (``MultipleListenOption/shared``):
/// the first subscribes, every listener gets every value, the last one unsubscribes.
@Suite("Several listeners per characteristic", .timeLimit(.minutes(1)))
struct SharedListenTests {
    static let heartRate = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))

    @Test("Callback and async listeners share one subscription; the last to end turns it off")
    func sharedListeners() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([70, 71, 72, 73]), measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            let peripheral = sensor.device

            let first = AwaitableLog<Int>()
            let firstToken = bluejay.listen(to: Self.heartRate, multipleListenOption: .shared) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { first.append(measurement.measurement) }
            }
            let second = AwaitableLog<Int>()
            let secondToken = bluejay.listen(to: Self.heartRate) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { second.append(measurement.measurement) }
            }
            let third: ValueStream<HeartRateMeasurement> = try await bluejay.listen(to: Self.heartRate, multipleListenOption: .shared)
            let thirdValues = AwaitableLog<Int>()
            let consumer = Task {
                do {
                    for try await measurement in third { thirdValues.append(measurement.measurement) }
                } catch {}
            }
            #expect(await peripheral.subscribers(of: "2A37").count == 1, "one subscription for three listeners")

            _ = try await sensor.sendMeasurement()
            #expect(await first.wait(forCount: 1) == [70])
            #expect(await second.wait(forCount: 1) == [70])
            #expect(await thirdValues.wait(forCount: 1) == [70])

            // Ending one listener leaves the others and the subscription.
            let ended = AwaitableLog<Bool>()
            bluejay.endListen(firstToken) { result in ended.append(result.isSuccess) }
            #expect(await ended.wait(forCount: 1) == [true])
            _ = try await sensor.sendMeasurement()
            #expect(await second.wait(forCount: 2) == [70, 71])
            #expect(await thirdValues.wait(forCount: 2) == [70, 71])
            #expect(first.count == 1, "an ended listener gets nothing more")
            #expect(await peripheral.subscribers(of: "2A37").count == 1)

            // Ending a listener twice does nothing.
            bluejay.endListen(firstToken) { result in ended.append(result.isSuccess) }
            #expect(await ended.wait(forCount: 2) == [true, true])
            #expect(bluejay.isListening(to: Self.heartRate))

            // The callback listener goes, then the async one: the last turns the notifications off.
            bluejay.endListen(secondToken) { result in ended.append(result.isSuccess) }
            #expect(await ended.wait(forCount: 3) == [true, true, true])
            #expect(await peripheral.subscribers(of: "2A37").count == 1)
            consumer.cancel()
            try await waitUntil("the last listener's end turns the notifications off") {
                await peripheral.subscribers(of: "2A37").isEmpty && !bluejay.isListening(to: Self.heartRate)
            }
            try await bluejay.disconnect()
        }
    }

    @Test("The existing listen's option decides: a trap refuses, a replaceable gives way, shared lets listeners join")
    func optionsKeepTheirMeaning() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([80, 81]), measurementInterval: nil))
            try await connect(bluejay, to: sensor.device)
            let first = AwaitableLog<String>()
            bluejay.listen(to: Self.heartRate, multipleListenOption: .trap) { (result: ReadResult<HeartRateMeasurement>) in
                first.append(result.describe)
            }
            let trapped = AwaitableLog<String>()
            bluejay.listen(to: Self.heartRate, multipleListenOption: .shared) { (result: ReadResult<HeartRateMeasurement>) in
                trapped.append(result.describe)
            }
            #expect(await trapped.wait(forCount: 1) == ["trapped"])
            try await bluejay.endListen(to: Self.heartRate)

            bluejay.listen(to: Self.heartRate, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                first.append(result.describe)
            }
            let replacing = AwaitableLog<String>()
            bluejay.listen(to: Self.heartRate, multipleListenOption: .shared) { (result: ReadResult<HeartRateMeasurement>) in
                replacing.append(result.describe)
            }
            #expect(await first.wait(forCount: 1) == ["replaced"])
            try await waitUntil("subscribed") { await !sensor.device.subscribers(of: "2A37").isEmpty }
            _ = try await sensor.sendMeasurement()
            #expect(await replacing.wait(forCount: 1) == ["80"])
            #expect(first.count == 1)
            try await bluejay.disconnect()
        }
    }
}

private extension Result where Success == Void {
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}

private extension Result where Success == HeartRateMeasurement, Failure == BluejayError {
    var describe: String {
        switch self {
        case let .success(measurement): return "\(measurement.measurement)"
        case .failure(.multipleListenTrapped): return "trapped"
        case .failure(.multipleListenReplaced): return "replaced"
        case let .failure(error): return "\(error)"
        }
    }
}
