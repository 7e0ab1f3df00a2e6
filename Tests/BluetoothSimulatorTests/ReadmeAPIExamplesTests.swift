import Bluejay
import BluetoothSimulator
import BluetoothTransport
import Foundation
import Synchronization
import Testing

/// The API examples of the README and of docs/BLUEJAY-API.md, docs/HOST.md and
/// docs/PERIPHERAL.md, as printed there, run against a simulated heart-rate sensor (only the
/// transport differs: the README names a real adapter).
@Suite("README and docs/: the API examples", .timeLimit(.minutes(1)))
struct ReadmeAPIExamplesTests {
    @Test("The Bluejay callback example: scan with .connect, read, write, listen, background task")
    func bluejayCallbacks() async throws {
        let simulator = Simulator()
        _ = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([72, 73, 74]), measurementInterval: .milliseconds(50)))
        let print = Transcript()   // what the example prints, for the checks below

        // --- README, "The Bluejay API" ---
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))

        let heartRateService = ServiceIdentifier(uuid: "180D")
        let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
        let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)

        bluejay.scan(
            serviceIdentifiers: [heartRateService],
            discovery: { discovery, discoveries in
                .connect(discovery, .seconds(15), .default) { result in
                    switch result {
                    case .success(let peripheral):
                        print("connected to \(peripheral)")
                        // Each request waits its turn in Bluejay's FIFO queue.
                        bluejay.read(from: bodySensorLocation) { (result: ReadResult<UInt8>) in
                            if case .success(let location) = result { print("sensor location \(location)") }
                        }
                        bluejay.write(to: bodySensorLocation, value: UInt8(2)) { result in print("write: \(result)") }
                        bluejay.listen(to: heartRate, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                            if case .success(let heartRate) = result { print("\(heartRate.measurement) bpm") }
                        }
                        bluejay.run(backgroundTask: { peripheral -> UInt8 in
                            // Blocking calls, one after the other, on a background thread.
                            try peripheral.write(to: bodySensorLocation, value: UInt8(1))
                            return try peripheral.read(from: bodySensorLocation)
                        }, completionOnMainThread: { (result: RunResult<UInt8>) in print("background task: \(result)") })
                    case .failure(let error):
                        print("failed to connect: \(error)")
                    }
                }
            },
            stopped: { discoveries, error in print("scan stopped", error.map { "\($0)" } ?? "") }
        )
        // --- end ---

        #expect(await eventually(timeout: .seconds(30)) {
            print.lines.contains { $0.hasPrefix("background task") } && print.lines.contains { $0.hasSuffix(" bpm") }
        }, "\(print.lines)")
        let printed = print.lines
        #expect(printed.contains { $0.hasPrefix("connected to") })
        #expect(printed.contains("sensor location 1"))
        #expect(printed.contains { $0.hasPrefix("write: success") })
        #expect(printed.contains { $0.hasSuffix(" bpm") })
        #expect(printed.contains("background task: success(1)"), "\(printed)")
        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("The async example")
    func bluejayAsync() async throws {
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([90]), measurementInterval: .milliseconds(50)))
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))
        try await bluejay.waitUntilReady()
        let identifier = sensor.device.peripheralIdentifier
        let heartRateService = ServiceIdentifier(uuid: "180D")
        let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
        let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
        var rates: [Int] = []

        // --- docs/BLUEJAY-API.md, "async/await" ---
        let peripheral = try await bluejay.connect(identifier, timeout: .seconds(15))
        let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
        try await bluejay.write(to: bodySensorLocation, value: UInt8(2))
        for try await measurement in try await bluejay.listen(to: heartRate) as ValueStream<HeartRateMeasurement> {
            rates.append(measurement.measurement)   // the sample prints it
            if rates.count == 2 { break }           // (the sample listens on)
        }
        // --- end ---

        #expect(peripheral == identifier)
        #expect(location == 1)
        #expect(rates == [90, 90])
        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("The host-stack example: scan with a service filter, connect, discover, subscribe")
    func hostStack() async throws {
        let simulator = Simulator()
        _ = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([61]), measurementInterval: .milliseconds(50)))
        var values: [[UInt8]] = []

        // --- docs/HOST.md (the transport differs) ---
        let host = LEHost(transport: simulator.centralTransport())
        try await host.powerOn()

        var found: Advertisement?
        for try await advertisement in try await host.scan(ScanOptions(serviceUUIDs: ["180D"])) {
            found = advertisement          // advertising data and scan response merged
            break
        }
        let connection = try await host.connect(to: try #require(found).peer, timeout: .seconds(10))
        let database = try await connection.gatt.discoverDatabase()
        let measurement = try #require(database.flatMap(\.characteristics).first { $0.characteristic.uuid == "2A37" }).characteristic
        for try await value in try await connection.gatt.subscribe(to: measurement) {
            values.append(value)           // the sample prints it
            if values.count == 2 { break }
        }
        // --- end ---

        #expect(values.count == 2, "the loop ends after two values, not with the stream")
        #expect(values.allSatisfy { $0.count >= 2 && $0[1] == 61 }, "\(values)")
        await host.shutdown()
        await simulator.shutdown()
    }

    @Test("The peripheral-role example: a service from a profile, advertising, write requests, notifications")
    func peripheralRole() async throws {
        // The device is the peripheral of TwoDevices; its host powers on through the example's manager.
        var options = TwoDevices.Options(powersOn: false)
        options.peripheral = .init(name: "pi", address: BluetoothAddress("C0:00:00:00:00:51") ?? .zero)
        options.central = .init(name: "phone", address: BluetoothAddress("C0:00:00:00:00:52") ?? .zero)
        let devices = try await TwoDevices(options)
        let link = devices.link
        let host = devices.peripheral

        // --- docs/PERIPHERAL.md ---
        let manager = PeripheralManager(host: host)
        try await manager.powerOn()
        let heartRate = try await manager.add(PeripheralService(profile: HeartRateProfile.service))
        try await manager.startAdvertising(name: "Pi Sensor", serviceUUIDs: [HeartRateProfile.Service.uuid])

        let controlPoint = try #require(heartRate.characteristic(HeartRateProfile.ControlPoint.uuid))
        let measurement = try #require(heartRate.characteristic(HeartRateProfile.Measurement.uuid))
        let responder = Task {
            for await request in await manager.writeRequests(for: controlPoint) {
                // 0x01 resets the energy expended; anything else is "Control Point Not Supported".
                request.respond(request.value == [0x01] ? .success : .error(ATTErrorCode(rawValue: 0x80)))
            }
        }
        // --- end (the updateValue line runs below, once a central listens) ---
        defer { responder.cancel() }

        let central = devices.central
        try await central.powerOn()
        var found: Advertisement?
        for try await advertisement in try await central.scan(ScanOptions(serviceUUIDs: ["180D"])) where advertisement.localName == "Pi Sensor" {
            found = advertisement
            break
        }
        await central.stopScanning()
        let connection = try await central.connect(to: try #require(found).peer)
        let remoteControlPoint = try await connection.gatt.characteristic("2A39", inService: "180D")
        try await connection.gatt.write([0x01], to: remoteControlPoint)
        await #expect(throws: HostError.att(ATTError(requestOpcode: .writeRequest, handle: remoteControlPoint.valueHandle, code: ATTErrorCode(rawValue: 0x80)))) {
            try await connection.gatt.write([0x02], to: remoteControlPoint)
        }
        let remoteMeasurement = try await connection.gatt.characteristic("2A37", inService: "180D")
        let notifications = try await connection.gatt.subscribe(to: remoteMeasurement)
        #expect(await eventually(timeout: .seconds(5)) { await !manager.subscribers(of: measurement).isEmpty })

        // --- docs/PERIPHERAL.md ---
        let delivery = try await manager.updateValue([0x00, 72], for: measurement)   // who got it, or why not
        // --- end ---
        #expect(delivery.shortfall == nil, "\(delivery)")
        var iterator = notifications.makeAsyncIterator()
        #expect(try await iterator.next() == [0x00, 72])
        try await connection.disconnect()
        await central.shutdown()
        await host.shutdown()
        link.shutdown()
    }
}

/// Stands in for `print` in the examples and keeps the lines.
private final class Transcript: Sendable {
    private let recorded = Mutex<[String]>([])
    var lines: [String] { recorded.withLock { $0 } }
    func callAsFunction(_ items: Any...) {
        let line = items.map { "\($0)" }.joined(separator: " ")
        recorded.withLock { $0.append(line) }
    }
}
