@testable import Bluejay
import BluetoothSimulator
import Foundation
import Synchronization
import Testing

@Suite("Bluejay against the simulated heart-rate sensor", .timeLimit(.minutes(1)))
struct HeartRateSensorTests {
    @Test("Callbacks, as in the README: scan and connect, read and write the location, listen to 8- and 16-bit heart rates")
    func readmeFlow() async throws {
        try await withSimulator { simulator, bluejay in
            let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .counting(from: 70), measurementInterval: .milliseconds(20)))
            let target = sensor.device.peripheralIdentifier
            let log = ObserverLog()
            bluejay.register(connectionObserver: log)

            // Scan for heart-rate sensors and connect to the first one found.
            let connection: ConnectionResult = try await callback("the connection") { done in
                bluejay.scan(serviceIdentifiers: [HeartRate.service], discovery: { discovery, _ in
                    guard discovery.peripheralIdentifier == target else { return .continue }
                    #expect(discovery.localName == "Bluejay HRM")
                    return .connect(discovery, .seconds(5), .default, done)
                }, stopped: { _, error in
                    #expect(error == nil)
                })
            }
            #expect(connection == .success(target))
            #expect(bluejay.isConnected && !bluejay.isScanning)
            try await waitUntil("the connected observer") { log.count("connected") == 1 }

            // Read the body sensor location.
            let location: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
            #expect(location == .success(HeartRateProfile.BodySensorLocation.chest.rawValue))

            // Write it, read it back; a location that does not exist is refused with Out of Range.
            let written: WriteResult = try await callback { done in bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(2)) { done($0) } }
            #expect((try? written.get()) != nil, "\(written)")
            let readBack: ReadResult<UInt8> = try await callback { done in bluejay.read(from: HeartRate.bodySensorLocation) { done($0) } }
            #expect(readBack == .success(2))
            #expect(await sensor.location == .wrist)
            let refused: WriteResult = try await callback { done in bluejay.write(to: HeartRate.bodySensorLocation, value: UInt8(9)) { done($0) } }
            guard case let .failure(.attError(code, _, _)) = refused else {
                Issue.record("expected an ATT error, got \(refused)")
                return
            }
            #expect(code == .outOfRange)
            #expect(await sensor.location == .wrist, "a refused write changes nothing")

            // Listen: consecutive heart rates in the 8-bit form.
            let measurements = Collected<HeartRateMeasurement>()
            bluejay.listen(to: HeartRate.measurement, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                switch result {
                case let .success(heartRate): measurements.append(heartRate)
                case let .failure(error): Issue.record("Failed to listen with error: \(error.localizedDescription)")
                }
            }
            // The sensor has counted up from 70 since it started, every 20 ms: past 255 (the
            // 16-bit form) if the steps above took long, as in a loaded run. Counting starts
            // again from 10 (a value it had not reached) once the listen is on.
            try await waitUntil("the sensor sees the subscription") { await !sensor.device.subscribers(of: "2A37").isEmpty }
            sensor.setHeartRateSource(.counting(from: 10))
            try await waitUntil("ten measurements from 10") { measurements.all.drop { $0.measurement != 10 }.count >= 10 }
            let first = Array(measurements.all.drop { $0.measurement != 10 }.prefix(10))
            #expect(first.allSatisfy { $0.isMeasurementIn8bits })
            #expect(zip(first, first.dropFirst()).allSatisfy { $1.measurement == $0.measurement + 1 }, "\(first.map(\.measurement))")

            // Above 255 the sensor switches to the 16-bit form; on request it uses it for any rate.
            sensor.setHeartRate(300)
            try await waitUntil("a 16-bit measurement") { measurements.all.contains { $0.measurement == 300 } }
            #expect(measurements.all.filter { $0.measurement == 300 }.allSatisfy { !$0.isMeasurementIn8bits })
            sensor.setUses16BitFormat(true)
            sensor.setHeartRate(80)
            try await waitUntil("80 bpm in the 16-bit form") { measurements.all.contains { $0.measurement == 80 && !$0.isMeasurementIn8bits } }

            let ended: WriteResult = try await callback { done in bluejay.endListen(to: HeartRate.measurement) { done($0) } }
            #expect((try? ended.get()) != nil)
            try await waitUntil("the sensor sees the unsubscription") { await sensor.device.subscribers(of: "2A37").isEmpty }

            let disconnection: DisconnectionResult = try await callback { done in bluejay.disconnect { done($0) } }
            #expect(disconnection == .disconnected(target))
            try await waitUntil("the disconnected observer") { log.count("disconnected") == 1 }
            await expectIdle(bluejay, listeningTo: [HeartRate.measurement])
            try await waitUntil("the sensor sees the central leave") { sensor.device.connectedCentrals.isEmpty }
        }
    }

    @Test("The async API and a background task: battery, serial number, writeAndRead, the control point")
    func asyncAndBackgroundTask() async throws {
        // The sensor measures when the test moves its clock.
        let sensorClock = ManualClock()
        try await withSimulator(simulatorClock: .manual(sensorClock)) { simulator, bluejay in
            var configuration = HeartRateSensor.Configuration(serialNumber: "SN-4242", heartRate: .sequence([60, 61, 62]),
                                                              measurementInterval: .milliseconds(20))
            configuration.reportsEnergyExpended = true
            let sensor = try await simulator.addHeartRateSensor(configuration)
            var found: ScanDiscovery?
            for try await event in bluejay.scan(serviceIdentifiers: [HeartRate.service]) where event.discovery.peripheralIdentifier == sensor.device.peripheralIdentifier {
                found = event.discovery
                break
            }
            let discovery = try #require(found)
            #expect(discovery.serviceIdentifiers.contains(HeartRate.service))
            try await waitUntil("the scan stops") { !bluejay.isScanning }
            try await connect(bluejay, to: sensor.device)

            let serial: String = try await bluejay.read(from: HeartRate.serialNumber)
            #expect(serial == "SN-4242")
            var values = try await bluejay.listen(to: HeartRate.measurement) as ValueStream<HeartRateMeasurement>
            try await waitUntil("the subscription") { await !sensor.device.subscribers(of: "2A37").isEmpty }
            var rates: [Int] = []
            var measurements = values.makeAsyncIterator()
            for _ in 0..<6 {
                sensorClock.advance(by: .milliseconds(20))
                if let measurement = try await measurements.next() { rates.append(measurement.measurement) }
            }
            values = ValueStream.makeStream(of: HeartRateMeasurement.self).stream
            measurements = values.makeAsyncIterator()
            #expect(rates == [60, 61, 62, 60, 61, 62], "one measurement per 20 ms: \(rates)")
            try await waitUntil("the listen ends") { !bluejay.isListening(to: HeartRate.measurement) }

            #expect(sensor.energyExpended == 6)
            try await bluejay.write(to: HeartRate.controlPoint, value: UInt8(1))
            #expect(sensor.energyExpended == 0, "the control point reset the energy expended before it answered")
            do {
                try await bluejay.write(to: HeartRate.controlPoint, value: UInt8(7))
                Issue.record("an unknown control point command was accepted")
            } catch let BluejayError.attError(code, _, _) {
                #expect(code == HeartRateSensor.controlPointNotSupported)
            }

            struct Report: Sendable, Equatable {
                var battery: UInt8
                var manufacturer: String
                var location: UInt8
            }
            let report: RunResult<Report> = try await callback("the background task") { done in
                bluejay.run(backgroundTask: { peripheral in
                    let battery: UInt8 = try peripheral.read(from: HeartRate.batteryLevel)
                    let manufacturer: String = try peripheral.read(from: HeartRate.manufacturer)
                    let location: UInt8 = try peripheral.writeAndRead(writeTo: HeartRate.bodySensorLocation, value: UInt8(4),
                                                                      readFrom: HeartRate.bodySensorLocation)
                    return Report(battery: battery, manufacturer: manufacturer, location: location)
                }, completionOnMainThread: { done($0) })
            }
            #expect(try report.get() == Report(battery: 87, manufacturer: "Bluejay", location: 4))
            #expect(await sensor.location == .hand)

            // Battery notifications reach a listen.
            let levels = try await bluejay.listen(to: HeartRate.batteryLevel) as ValueStream<UInt8>
            try await sensor.setBatteryLevel(42)
            var iterator = levels.makeAsyncIterator()
            #expect(try await iterator.next() == 42)
            try await bluejay.endListen(to: HeartRate.batteryLevel)

            try await bluejay.disconnect()
            await expectIdle(bluejay, listeningTo: [HeartRate.measurement, HeartRate.batteryLevel])
        }
    }

    @Test("Bluejay on `virtual:NAME` finds a sensor on the process-wide link")
    func inProcessRadio() async throws {
        let simulator = Simulator(link: InProcessRadio.link)
        let sensor = try await simulator.addHeartRateSensor(.init(name: "Radio HRM", measurementInterval: nil))
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .specification("virtual:simulator-tests"), operationTimeout: .seconds(30))))
        do {
            try await bluejay.waitUntilReady()
            try await connect(bluejay, to: sensor.device)
            let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
            #expect(location == 1)
            let listen = try await bluejay.listen(to: HeartRate.measurement) as ValueStream<HeartRateMeasurement>
            try await sensor.sendMeasurement()
            var iterator = listen.makeAsyncIterator()
            #expect(try await iterator.next()?.measurement == Int(sensor.currentHeartRate ?? 0))
            try await bluejay.disconnect()
        } catch {
            Issue.record("\(error)")
        }
        await bluejay.stop()
        await simulator.shutdown()
        #expect(!InProcessRadio.link.isShutDown, "a simulator on a shared link leaves it running")
        #expect(sensor.device.isStopped)
    }
}
