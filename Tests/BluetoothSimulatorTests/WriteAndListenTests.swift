@testable import Bluejay
import BluetoothSimulator
import Foundation
import Testing

/// LittleBluetooth's writeAndListen and writeAndRead as ordinary queued operations.
@Suite("writeAndListen and writeAndRead outside background tasks", .timeLimit(.minutes(1)))
struct WriteAndListenTests {
    static let service = ServiceIdentifier(uuid: "FFE0")
    /// Answers a write with a notification of the value plus one.
    static let echo = CharacteristicIdentifier(uuid: "FFE1", service: service)
    /// Never answers.
    static let silent = CharacteristicIdentifier(uuid: "FFE2", service: service)
    /// A plain read/write value.
    static let setting = CharacteristicIdentifier(uuid: "FFE3", service: service)

    static func declaration() -> SimulatedPeripheral {
        SimulatedPeripheral(name: "Echo", services: [
            SimulatedService(uuid: "FFE0", characteristics: [
                SimulatedCharacteristic(uuid: "FFE1", properties: [.write, .notify], onWrite: { write in
                    let answer = [(write.value.first ?? 0) &+ 1]
                    let (device, central) = (write.device, write.central)
                    Task { try? await device.notify(answer, on: "FFE1", to: central) }
                    return .success
                }),
                SimulatedCharacteristic(uuid: "FFE2", properties: [.write, .notify]),
                SimulatedCharacteristic(uuid: "FFE3", properties: [.read, .write], value: [0]),
            ]),
        ])
    }

    @Test("async: the first value after the write, with a listen of its own that ends after; writeAndRead reads back")
    func asyncForms() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            try await connect(bluejay, to: device)
            let answer: UInt8 = try await bluejay.writeAndListen(writeTo: Self.echo, value: UInt8(41), listenTo: Self.echo)
            #expect(answer == 42)
            try await waitUntil("the own listen ended") { !bluejay.isListening(to: Self.echo) }
            try await waitUntil("unsubscribed") { await device.subscribers(of: "FFE1").isEmpty }

            let readBack: UInt8 = try await bluejay.writeAndRead(writeTo: Self.setting, value: UInt8(7), readFrom: Self.setting)
            #expect(readBack == 7)
            try await bluejay.disconnect()
        }
    }

    @Test("callback: an app's listen on the characteristic stays and gets the answer too")
    func callbackWithTheAppsListen() async throws {
        try await withSimulator { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            try await connect(bluejay, to: device)
            let heard = AwaitableLog<UInt8>()
            bluejay.listen(to: Self.echo) { (result: ReadResult<UInt8>) in
                if case let .success(value) = result { heard.append(value) }
            }
            let order = AwaitableLog<String>()
            bluejay.writeAndListen(writeTo: Self.echo, value: UInt8(9), listenTo: Self.echo) { (result: ReadResult<UInt8>) in
                order.append("answer \(result)")
            }
            bluejay.write(to: Self.setting, value: UInt8(3)) { _ in order.append("write after") }
            let lines = await order.wait(forCount: 2)
            #expect(lines?.contains("answer success(10)") == true, "\(order.items)")
            #expect(await heard.wait(forCount: 1) == [10])
            #expect(bluejay.isListening(to: Self.echo), "the app's listen stays")
            try await bluejay.disconnect()
        }
    }

    @Test("No answer within the timeout (simulated time): timedOut, and the own listen ends")
    func timeout() async throws {
        let clock = ManualClock()
        try await withSimulator(bluejayClock: .manual(clock)) { simulator, bluejay in
            let device = try await simulator.add(Self.declaration())
            try await connect(bluejay, to: device)
            let outcome = AwaitableLog<ReadResult<UInt8>>()
            let started = clock.now
            bluejay.writeAndListen(writeTo: Self.silent, value: UInt8(1), listenTo: Self.silent, timeout: .seconds(3)) { (result: ReadResult<UInt8>) in
                outcome.append(result)
            }
            await step(clock, until: { outcome.count > 0 })
            guard case let .failure(.timedOut(operation, after))? = outcome.items.first else {
                Issue.record("expected a time-out, got \(outcome.items)")
                return
            }
            #expect(after == .seconds(3) && operation.contains("FFE2"))
            #expect(clock.now - started >= .seconds(3))
            try await waitUntil("the own listen ended") { !bluejay.isListening(to: Self.silent) }
            try await bluejay.disconnect()
        }
    }
}
