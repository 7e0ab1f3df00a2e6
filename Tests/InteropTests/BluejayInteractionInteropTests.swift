import Bluejay
import Foundation
import Synchronization
import Testing

extension InteropSuites.BluejayInteropTests {
    @Suite("Reading, writing, listening (README: Interactions)")
    struct Interactions {
        @Test("Reading the body sensor location, as the README shows it")
        func readBodySensorLocation() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let label: String = try await callback { done in
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in
                        switch result {
                        case let .success(location):
                            let names = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]
                            done(Int(location) < names.count ? names[Int(location)] : "Unknown")
                        case let .failure(error):
                            done("Failed to read sensor location with error: \(error.localizedDescription)")
                        }
                    }
                }
                #expect(label == "Chest")
                let serial: ReadResult<String> = try await callback { done in bluejay.read(from: Peer.serialNumber) { done($0) } }
                #expect(serial == .success("SN-0001"))

                // Fifty reads queued at once: each waits its turn, all answer in order.
                let reads = Collected<ReadResult<UInt8>>()
                for _ in 0..<50 {
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in reads.append(result) }
                }
                try await waitUntil("fifty reads") { reads.count == 50 }
                #expect(reads.all.allSatisfy { $0 == .success(1) })
            }
        }

        @Test("Writing the body sensor location; a value the peripheral refuses is an ATT error with its code")
        func writeBodySensorLocation() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let written: WriteResult = try await callback { done in bluejay.write(to: Peer.bodySensorLocation, value: UInt8(2)) { done($0) } }
                #expect((try? written.get()) != nil, "\(written)")
                let event = try await rig.waitForEvent(named: "written")
                #expect(event.string("uuid") == "2A38" && event.bytes("value") == [2] && event.bool("with_response") == true)
                let readBack: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } }
                #expect(readBack == .success(2))

                let refused: WriteResult = try await callback { done in bluejay.write(to: Peer.bodySensorLocation, value: UInt16(0x0102)) { done($0) } }
                guard case let .failure(.attError(code, _, _)) = refused else {
                    Issue.record("expected an ATT error, got \(refused)")
                    return
                }
                #expect(code == .invalidAttributeValueLength, "the characteristic holds one byte")
                let missing: ReadResult<UInt8> = try await callback { done in
                    bluejay.read(from: CharacteristicIdentifier(uuid: "2A39", service: Peer.heartRateService)) { done($0) }
                }
                #expect(missing == .failure(.missingCharacteristic(CharacteristicIdentifier(uuid: "2A39", service: Peer.heartRateService))))
            }
        }

        @Test("Listening to heart rate with the README's HeartRateMeasurement, 8- and 16-bit forms")
        func listenToHeartRate() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let measurements = Collected<HeartRateMeasurement>()
                bluejay.listen(to: Peer.heartRate, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
                    switch result {
                    case let .success(heartRate): measurements.append(heartRate)
                    case let .failure(error): Issue.record("Failed to listen with error: \(error.localizedDescription)")
                    }
                }
                let subscribed = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                #expect(subscribed.bool("notify") == true)
                try await rig.request(.notify(uuid: "2A37", count: 1, value: [0x00, 72]))
                try await rig.request(.notify(uuid: "2A37", count: 3, start: 300))
                try await waitUntil("four measurements") { measurements.count == 4 }
                #expect(measurements.all.map(\.measurement) == [72, 300, 301, 302])
                #expect(measurements.all.map(\.isMeasurementIn8bits) == [true, false, false, false])
                #expect(bluejay.isListening(to: Peer.heartRate))

                let ended: WriteResult = try await callback { done in bluejay.endListen(to: Peer.heartRate) { done($0) } }
                #expect((try? ended.get()) != nil)
                let off = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                #expect(off.bool("notify") == false)
                #expect(!bluejay.isListening(to: Peer.heartRate))
            }
        }

        @Test("A trap listen refuses a second listen; a replaceable one hands over to it")
        func multipleListenOptions() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let first = Collected<ReadResult<UInt8>>()
                bluejay.listen(to: Peer.batteryLevel, multipleListenOption: .trap) { (result: ReadResult<UInt8>) in first.append(result) }
                let trapped: ReadResult<UInt8> = try await callback { done in
                    bluejay.listen(to: Peer.batteryLevel, multipleListenOption: .replaceable) { done($0) }
                }
                #expect(trapped == .failure(.multipleListenTrapped(Peer.batteryLevel)))
                _ = try await callback { done in bluejay.endListen(to: Peer.batteryLevel) { done($0) } } as WriteResult

                let old = Collected<ReadResult<UInt8>>()
                let new = Collected<ReadResult<UInt8>>()
                bluejay.listen(to: Peer.batteryLevel, multipleListenOption: .replaceable) { (result: ReadResult<UInt8>) in old.append(result) }
                bluejay.listen(to: Peer.batteryLevel) { (result: ReadResult<UInt8>) in new.append(result) }
                try await waitUntil("the old listen told") { old.count == 1 }
                #expect(old.all == [.failure(.multipleListenReplaced(Peer.batteryLevel))])
                _ = try await callback { done in bluejay.read(from: Peer.batteryLevel) { done($0) } } as ReadResult<UInt8>
                try await rig.request(.notify(uuid: "2A19", count: 2, start: 10))
                try await waitUntil("the new listen") { new.count == 2 }
                #expect(new.all == [.success(10), .success(11)])
                #expect(old.count == 1)
            }
        }

        @Test("A notification is never taken for the reply of a read running at the same time")
        func notificationsDuringReads() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let values = Collected<UInt8>()
                bluejay.listen(to: Peer.batteryLevel) { (result: ReadResult<UInt8>) in
                    if case let .success(value) = result { values.append(value) }
                }
                try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A19" && $0.bool("notify") == true }
                // Notifications carry n % 256 for n from 100; the stored value stays 87.
                try await rig.request(.stream(uuid: "2A19", count: 150, intervalMilliseconds: 2, start: 100))
                var reads: [UInt8] = []
                for _ in 0..<25 {
                    let read: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.batteryLevel) { done($0) } }
                    reads.append(try read.get())
                }
                try await rig.waitForEvent(named: "streamed", timeout: .seconds(20))
                try await waitUntil("every notification") { values.count == 150 }
                #expect(reads == Array(repeating: 87, count: 25), "every read answered with the stored value")
                #expect(values.all == (100..<250).map { UInt8($0 % 256) }, "every notification, in order, to the listen")
            }
        }

        @Test("Write without response is paced by the controller's credits: every value arrives, in order")
        func writeWithoutResponseFlowControl() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let maximum = try #require(bluejay.maximumWriteValueLength(for: .withoutResponse))
                #expect(maximum == (bluejay.attMTU ?? 0) - 3)
                let count = 200
                let values = (0..<count).map { index in Data((0..<20).map { UInt8(truncatingIfNeeded: index &+ $0) }) }
                let results = Collected<WriteResult>()
                for value in values {
                    bluejay.write(to: Peer.writeSink, value: value, type: .withoutResponse) { results.append($0) }
                }
                try await waitUntil("every write", timeout: .seconds(30)) { results.count == count }
                #expect(results.all.allSatisfy { (try? $0.get()) != nil })
                var received: [[UInt8]] = []
                try await waitUntil("the peripheral got them all", timeout: .seconds(10)) {
                    let ack = try? await rig.request(.received(uuid: "6E400007-B5A3-F393-E0A9-E50E24DCCA9E"))
                    received = ack?["values"]?.arrayValue?.compactMap { $0.stringValue.flatMap(Hex.decode) } ?? []
                    return received.count == count
                }
                #expect(received == values.map { Array($0) }, "in order, none lost")

                let tooLong: WriteResult = try await callback { done in
                    bluejay.write(to: Peer.writeSink, value: Data(count: maximum + 1), type: .withoutResponse) { done($0) }
                }
                guard case let .failure(tooLongError) = tooLong else {
                    Issue.record("expected valueTooLong, got \(tooLong)")
                    return
                }
                #expect(tooLongError == .valueTooLong(length: maximum + 1, maximum: maximum))
                let notAllowed: WriteResult = try await callback { done in
                    bluejay.write(to: Peer.bodySensorLocation, value: UInt8(1), type: .withoutResponse) { done($0) }
                }
                guard case .failure(.notSupported) = notAllowed else {
                    Issue.record("expected notSupported, got \(notAllowed)")
                    return
                }
            }
        }

        @Test("Descriptors can be read and written; the negotiated MTU is visible")
        func descriptorsAndMTU() async throws {
            try await withBluejay { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let mtuEvent = try await rig.waitForEvent(named: "mtu")
                #expect(bluejay.attMTU == mtuEvent.int("value"))
                #expect(bluejay.attMTU == 517)
                #expect(bluejay.maximumWriteValueLength(for: .withoutResponse) == 514)
                #expect(bluejay.maximumWriteValueLength(for: .withResponse) == 512)

                let initial: ReadResult<UInt16> = try await callback { done in bluejay.read(from: Peer.heartRateConfiguration) { done($0) } }
                #expect(initial == .success(0))
                let enabled: WriteResult = try await callback { done in bluejay.write(to: Peer.heartRateConfiguration, value: UInt16(0x0001)) { done($0) } }
                #expect((try? enabled.get()) != nil)
                let subscribed = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" }
                #expect(subscribed.bool("notify") == true)
                let after: ReadResult<UInt16> = try await callback { done in bluejay.read(from: Peer.heartRateConfiguration) { done($0) } }
                #expect(after == .success(1))
            }
        }

        @Test("A Service Changed indication reaches the ServiceObserver; added services can be used, removed ones are gone")
        func serviceChanged() async throws {
            try await withBluejay { rig, bluejay in
                let recorder = Recorder()
                bluejay.register(serviceObserver: recorder)
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let before: ReadResult<String> = try await callback { done in bluejay.read(from: Peer.dynamicValue) { done($0) } }
                #expect(before == .failure(.missingService(Peer.dynamicService)))

                let added = try await rig.request(.addService())
                #expect(added.int("indicated") == 1, "Bluejay enabled Service Changed indications when connecting")
                try await waitUntil("the observer") { recorder.count("services modified") == 1 }
                #expect(recorder.events.all.last == "services modified []", "nothing Bluejay used was invalidated")
                let value: ReadResult<String> = try await callback { done in bluejay.read(from: Peer.dynamicValue) { done($0) } }
                #expect(value == .success("added"))

                try await rig.request(.removeService())
                try await waitUntil("the observer again") { recorder.count("services modified") == 2 }
                #expect(recorder.events.all.last == "services modified [\"\(Peer.dynamicService)\"]")
                let gone: ReadResult<String> = try await callback { done in bluejay.read(from: Peer.dynamicValue) { done($0) } }
                #expect(gone == .failure(.missingService(Peer.dynamicService)))
            }
        }

        @Test("A link lost during a read fails that read with a typed error; Bluejay reconnects and goes on")
        func linkLostDuringRead() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                try await connect(bluejay, to: peer, rig: rig)
                try await rig.request(.dropOnNextRead(uuid: "2A38"))
                let results = Collected<ReadResult<UInt8>>()
                let dropped: ReadResult<UInt8> = try await callback { done in
                    bluejay.read(from: Peer.bodySensorLocation) { done($0) }
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in results.append(result) }
                }
                guard case let .failure(.disconnected(who, reason)) = dropped else {
                    Issue.record("expected a disconnection, got \(dropped)")
                    return
                }
                #expect(who == peer && reason == .remoteUserTerminatedConnection)
                try await waitUntil("the queued read") { results.count == 1 }
                guard case .failure(.disconnected) = results.all.first else {
                    Issue.record("the queued read must fail too: \(results.all)")
                    return
                }
                try await waitUntil("reconnected", timeout: .seconds(15)) { bluejay.isConnected }
                let after: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } }
                #expect(after == .success(1))
            }
        }
    }
}

extension Duration {
    var bluejaySecondsValue: Double { self / .seconds(1) }
}
