@testable import Bluejay
import BluetoothSimulator
import Foundation
import Synchronization
import Testing

/// LittleBluetooth's one stream of every notification, in the async and the callback API.
@Suite("The stream of all notifications", .timeLimit(.minutes(1)))
struct AllNotificationsTests {
    static let heartRate = CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180D"))
    static let battery = CharacteristicIdentifier(uuid: "2A19", service: ServiceIdentifier(uuid: "180F"))

    final class Observer: NotificationObserver {
        let seen = AwaitableLog<CharacteristicNotification>()
        func didReceiveNotification(_ notification: CharacteristicNotification) { seen.append(notification) }
    }

    @Test("Values of every listen, callback or async, come with their characteristic, in order per characteristic; observers see them too")
    func everyListenedValue() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([70, 71, 72]), measurementInterval: nil))
            let peripheral = sensor.device.peripheralIdentifier
            try await connect(bluejay, to: sensor.device)
            let observer = Observer()
            bluejay.register(notificationObserver: observer)
            var all = bluejay.notifications().makeAsyncIterator()

            // One listen with a callback, one async.
            let heartRates = AwaitableLog<Int>()
            bluejay.listen(to: Self.heartRate) { (result: ReadResult<HeartRateMeasurement>) in
                if case let .success(measurement) = result { heartRates.append(measurement.measurement) }
            }
            let batteryLevels: ValueStream<UInt8> = try await bluejay.listen(to: Self.battery)
            try await waitUntil("both subscribed") {
                let heartRate = await sensor.device.subscribers(of: "2A37")
                let battery = await sensor.device.subscribers(of: "2A19")
                return !heartRate.isEmpty && !battery.isEmpty
            }

            let first = try await sensor.sendMeasurement()
            try await sensor.setBatteryLevel(55)
            let second = try await sensor.sendMeasurement()
            var received: [CharacteristicNotification] = []
            while received.count < 3, let next = await all.next() { received.append(next) }
            // In order per characteristic (each subscription hands its values over on its own).
            #expect(received.filter { $0.characteristic == Self.heartRate } == [
                CharacteristicNotification(peripheral: peripheral, characteristic: Self.heartRate, value: Data(first)),
                CharacteristicNotification(peripheral: peripheral, characteristic: Self.heartRate, value: Data(second)),
            ], "\(received)")
            #expect(received.filter { $0.characteristic == Self.battery }
                    == [CharacteristicNotification(peripheral: peripheral, characteristic: Self.battery, value: Data([55]))], "\(received)")
            let observed = await observer.seen.wait(forCount: 3)
            #expect(observed.map { Set($0.map(\.value)) } == Set(received.map(\.value)))
            // The listens themselves still get their values.
            #expect(await heartRates.wait(forCount: 2) == [70, 71])
            var levels = batteryLevels.makeAsyncIterator()
            #expect(try await levels.next() == 55)

            // After the listen ends, the characteristic's values are not Bluejay's any more.
            try await bluejay.endListen(to: Self.battery)
            bluejay.unregister(notificationObserver: observer)
            try await sensor.setBatteryLevel(54)
            let third = try await sensor.sendMeasurement()
            let next = await all.next()
            #expect(next?.characteristic == Self.heartRate && next?.value == Data(third), "not the battery level: \(String(describing: next))")
            #expect(observer.seen.count == 3, "unregistered")
            try await bluejay.disconnect()
        }
    }
}
