import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Synchronization
import Testing

extension InteropSuites {
    /// Bluejay's peripheral role against Bumble: `bumble/central.py` runs a Bumble central and
    /// scanner on the rig's link (it reuses peer.py's controllers), and Bluejay's host advertises
    /// and serves GATT on controller A. The GATT exchange also runs on Rootcanal.
    @Suite("Peripheral interop with a Bumble central", .sharedRootcanal)
    struct PeripheralInteropTests {
        static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
        static let counter = BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E")
        static let command = BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E")
        static let blob = BluetoothUUID("6E400004-B5A3-F393-E0A9-E50E24DCCA9E")
        static let blobValue: [UInt8] = (0..<400).map { UInt8(($0 * 7) % 256) }
        /// What the application answers a write to `command` that is not one octet long.
        static let wrongLength = ATTErrorCode(rawValue: 0x80)

        // MARK: Advertising

        @Test("A Bumble scanner decodes our advertising data and scan response field by field")
        func advertisingAndScanResponse() async throws {
            try await withPeripheral { central, manager in
                let data = AdvertisingData([
                    .flags(.leOnlyGeneralDiscoverable), .completeLocalName("Bluejay"),
                    .serviceUUIDs16([0x180D, 0x180F], complete: true),
                    .manufacturerSpecificData(companyID: 0x1234, data: [1, 2, 3]),
                ])
                let scanResponse = AdvertisingData([
                    .txPowerLevel(-4), .appearance(0x0341), .serviceData16(uuid: 0x180F, data: [87]),
                ])
                try await manager.startAdvertising(data, scanResponse: scanResponse)
                let address = central.hostPublicAddress
                // A passive scan gets the advertising data alone.
                try await central.request("scan", ["active": false])
                let advertisement = try await central.waitForEvent(named: "advertisement") { $0.string("address") == address && $0.bool("scan_response") == false }
                #expect(advertisement.bool("connectable") == true)
                #expect(advertisement.bytes("data") == (try data.encoded()))
                #expect(advertisement.int("flags") == 0x06)
                #expect(advertisement.string("name") == "Bluejay")
                #expect(advertisement["uuids"]?.arrayValue?.compactMap { $0.stringValue } == ["180D", "180F"])
                #expect(advertisement["manufacturer"]?.objectValue?["company"]?.intValue == 0x1234)
                #expect(advertisement["manufacturer"]?.objectValue?["data"]?.stringValue == "010203")
                #expect(advertisement["tx_power"] == nil)

                // An active scan gets the scan response too; Bumble merges it with the advertising data.
                try await central.request("scan", ["active": true])
                let response = try await central.waitForEvent(named: "advertisement") { $0.string("address") == address && $0.bool("scan_response") == true }
                #expect(response.bytes("data") == (try scanResponse.encoded()))
                #expect(response.string("name") == "Bluejay")
                #expect(response.int("tx_power") == -4)
                #expect(response.int("appearance") == 0x0341)
                #expect(response["service_data"]?.objectValue?["uuid"]?.stringValue == "180F")
                #expect(response["service_data"]?.objectValue?["data"]?.stringValue == "57")
                try await central.request("stop_scan")
            }
        }

        @Test("A Bumble scanner decodes our iBeacon, not connectable")
        func beacon() async throws {
            try await withPeripheral { central, manager in
                let region = BeaconRegion(proximityUUID: BluetoothUUID("DE6E8DAD-8D99-4E20-8C4B-D9CC2F9A7E83"), identifier: "My iBeacon",
                                          major: 100, minor: 1, measuredPower: -59)
                try await manager.startAdvertising(region: region)
                try await central.request("scan", ["active": true])
                let address = central.hostPublicAddress
                let advertisement = try await central.waitForEvent(named: "advertisement") { $0.string("address") == address }
                #expect(advertisement.bool("connectable") == false)
                let beacon = advertisement["ibeacon"]?.objectValue
                #expect(beacon?["uuid"]?.stringValue == "DE6E8DAD-8D99-4E20-8C4B-D9CC2F9A7E83")
                #expect(beacon?["major"]?.intValue == 100)
                #expect(beacon?["minor"]?.intValue == 1)
                #expect(beacon?["measured_power"]?.intValue == -59)
                #expect(advertisement.int("flags") == 0x06)
                try await central.request("stop_scan")
            }
        }

        // MARK: GATT

        @Test("A Bumble central discovers, reads, writes, subscribes and reads the device name", arguments: InteropController.allCases)
        func gattExchange(on controller: InteropController) async throws {
            try await withPeripheral(controller: controller) { central, manager in
                let published = try await manager.add(Self.definition)
                let heartRate = try await manager.add(PeripheralService(profile: HeartRateProfile.service))
                let counterCharacteristic = try #require(published.characteristic(Self.counter))
                let commandCharacteristic = try #require(published.characteristic(Self.command))
                let blobCharacteristic = try #require(published.characteristic(Self.blob))
                let written = Mutex<[[UInt8]]>([])
                let requests = await manager.writeRequests(for: commandCharacteristic)
                let responder = Task {
                    for await request in requests {
                        written.withLock { $0.append(request.value) }
                        request.respond(request.value.count == 1 ? .success : .error(Self.wrongLength))
                    }
                }
                defer { responder.cancel() }
                var subscriptions = await manager.subscriptionChanges().makeAsyncIterator()
                var connections = await manager.connectionEvents().makeAsyncIterator()
                let readiness = ReadinessCounter(await manager.connectionEvents())

                try await manager.startAdvertising(name: "Bluejay GATT", serviceUUIDs: [Self.service])
                let address = try await #require(manager.host).publicAddressText
                let connected = try await central.request("connect", ["address": address, "address_type": "public"])
                #expect(connected.int("mtu") == 23)
                let event = await connections.next()
                guard case .connected? = event else {
                    Issue.record("expected a connection event, got \(String(describing: event))")
                    return
                }

                // Discovery: the same handles as published, the GAP and GATT services first.
                let discovery = try await central.request("discover")
                let services = try #require(discovery["services"]?.arrayValue?.compactMap { $0.objectValue })
                #expect(services.compactMap { $0["uuid"]?.stringValue } == ["1800", "1801", Self.service.uuidString, "180D"])
                let custom = try #require(services.first { $0["uuid"]?.stringValue == Self.service.uuidString })
                #expect(custom["start"]?.intValue == Int(published.handleRange.lowerBound))
                #expect(custom["end"]?.intValue == Int(published.handleRange.upperBound))
                let characteristics = try #require(custom["characteristics"]?.arrayValue?.compactMap { $0.objectValue })
                #expect(characteristics.compactMap { $0["handle"]?.intValue } == published.characteristics.map { Int($0.valueHandle) })
                let counterEntry = try #require(characteristics.first { $0["handle"]?.intValue == Int(counterCharacteristic.valueHandle) })
                let descriptorUUIDs = counterEntry["descriptors"]?.arrayValue?.compactMap { $0.objectValue?["uuid"]?.stringValue }
                #expect(descriptorUUIDs == ["2902", "2901"])
                #expect(counterEntry["properties"]?.intValue == Int(counterCharacteristic.properties.rawValue))
                let heartRateEntry = try #require(services.last)
                #expect(heartRateEntry["start"]?.intValue == Int(heartRate.handleRange.lowerBound))

                // Device name, short read, long read at MTU 23 (Read Blob after Read).
                let name = try await central.request("read_by_uuid", ["uuid": "2A00"])
                #expect(name["values"]?.arrayValue?.compactMap { $0.stringValue } == [Hex.encode(Array("Bluejay GATT".utf8))])
                #expect(try await central.request("read", ["handle": Int(counterCharacteristic.valueHandle)]).bytes("value") == [0, 0, 0, 0])
                #expect(try await central.request("read", ["handle": Int(blobCharacteristic.valueHandle)]).bytes("value") == Self.blobValue)
                let short = try await central.request("read", ["handle": Int(blobCharacteristic.valueHandle), "long": false])
                #expect(short.bytes("value") == Array(Self.blobValue.prefix(22)))

                // Writes: accepted, refused with the application's error, long through prepared writes.
                let accepted = try await central.request("write", ["handle": Int(commandCharacteristic.valueHandle), "value": [UInt8(7)]])
                #expect(accepted.int("att_error") == nil)
                let refused = try await central.request("write", ["handle": Int(commandCharacteristic.valueHandle), "value": [UInt8(1), 2]])
                #expect(refused.int("att_error") == Int(Self.wrongLength.rawValue))
                #expect(written.withLock { $0 } == [[7], [1, 2]])
                #expect(await manager.value(of: commandCharacteristic) == [7])
                let readOnly = try await central.request("write", ["handle": Int(published.handleRange.lowerBound), "value": [UInt8(1)]])
                #expect(readOnly.int("att_error") == Int(ATTErrorCode.writeNotPermitted.rawValue))
                let longValue = (0..<300).map { UInt8(255 - $0 % 256) }
                let long = try await central.request("write_long", ["handle": Int(blobCharacteristic.valueHandle), "value": longValue])
                #expect(long.int("att_error") == nil)
                #expect(await manager.value(of: blobCharacteristic) == longValue)
                let unknown = try await central.request("read", ["handle": 0x0FFF])
                #expect(unknown.int("att_error") == Int(ATTErrorCode.invalidHandle.rawValue))

                // Notifications, in order.
                try await central.request("subscribe", ["handle": Int(counterCharacteristic.valueHandle)])
                let subscribed = await subscriptions.next()
                #expect(subscribed?.isNotifying == true)
                // More than the controller takes at once: the full queue is reported and the
                // manager says when to go on; nothing is lost or reordered.
                for index in 1...60 {
                    _ = try await manager.deliver(UInt32(index).serialize(), to: counterCharacteristic, readiness: readiness,
                                                            readyTimeout: .seconds(5))
                }
                for index in 1...60 {
                    let value = try await central.waitForEvent(named: "value") { $0.bool("indication") == false }
                    #expect(value.bytes("value") == UInt32(index).serialize())
                }
                // Whether the queue fills here depends on how fast Bumble drains it; that the full
                // queue is reported and waited out is checked deterministically in
                // GATTServerNotificationTests.

                // Indications, in order, each sent only after the previous one was confirmed.
                try await central.request("unsubscribe", ["handle": Int(counterCharacteristic.valueHandle)])
                _ = await subscriptions.next()
                try await central.request("confirmation_delay", ["ms": 100])
                try await central.request("subscribe", ["handle": Int(counterCharacteristic.valueHandle), "indicate": true])
                let indicating = await subscriptions.next()
                #expect(indicating?.isIndicating == true)
                for index in 100..<105 { _ = try await manager.updateValue(UInt32(index), for: counterCharacteristic) }
                var times: [Double] = []
                for index in 100..<105 {
                    let value = try await central.waitForEvent(named: "value") { $0.bool("indication") == true }
                    #expect(value.bytes("value") == UInt32(index).serialize())
                    times.append(value.fields["t"]?.doubleValue ?? 0)
                }
                let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
                #expect(gaps.allSatisfy { $0 >= 0.09 }, "indications \(gaps) s apart; each should wait for the 100 ms confirmation")

                try await central.request("disconnect")
                var disconnection = await connections.next()
                while case .readyToUpdateSubscribers? = disconnection { disconnection = await connections.next() }
                guard case let .disconnected(gone, reason)? = disconnection else {
                    Issue.record("expected a disconnection event, got \(String(describing: disconnection))")
                    return
                }
                #expect(gone.address?.address.description == "F0:00:00:00:00:C1")
                #expect(reason == .remoteUserTerminatedConnection)
            }
        }

        @Test("After a larger MTU, long values need fewer requests and notifications carry more")
        func largerMTU() async throws {
            try await withPeripheral { central, manager in
                let published = try await manager.add(Self.definition)
                let counterCharacteristic = try #require(published.characteristic(Self.counter))
                let blobCharacteristic = try #require(published.characteristic(Self.blob))
                try await manager.startAdvertising(name: "Bluejay MTU")
                try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                #expect(try await central.request("mtu", ["value": 517]).int("mtu") == 517)
                try await central.request("discover")
                let short = try await central.request("read", ["handle": Int(blobCharacteristic.valueHandle), "long": false])
                #expect(short.bytes("value") == Self.blobValue)
                try await central.request("subscribe", ["handle": Int(counterCharacteristic.valueHandle)])
                let big = (0..<200).map { UInt8($0) }
                _ = try await manager.updateValue(big, for: counterCharacteristic)
                #expect(try await central.waitForEvent(named: "value").bytes("value") == big)
                try await central.request("disconnect")
            }
        }

        @Test("Advertising starts again after the central disconnects, and the central connects again")
        func advertiseAgain() async throws {
            try await withPeripheral { central, manager in
                _ = try await manager.add(Self.definition)
                var options = PeripheralAdvertisingOptions()
                options.parameters.restartsAfterDisconnection = true
                var connections = await manager.connectionEvents().makeAsyncIterator()
                try await manager.startAdvertising(name: "Bluejay Again", options: options)
                try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                // The central's ack may come before the manager has seen the connection.
                while let event = await connections.next() {
                    if case .connected = event { break }
                }
                #expect(await manager.isAdvertising == false)
                try await central.request("disconnect")
                #expect(await eventually(timeout: .seconds(10)) { await manager.isAdvertising }, "advertising again")
                let again = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                #expect(again.int("handle") != nil)
                try await central.request("disconnect")
            }
        }

        // MARK: Support

        static var definition: PeripheralService {
            PeripheralService(uuid: service, characteristics: [
                PeripheralCharacteristic(uuid: counter, properties: [.read, .notify, .indicate], value: [0, 0, 0, 0], userDescription: "Counter"),
                PeripheralCharacteristic(uuid: command, properties: [.read, .write], value: [0]),
                PeripheralCharacteristic(uuid: blob, properties: [.read, .write], value: blobValue),
            ])
        }

        /// Starts the Bumble central, a Bluejay host on the rig's controller A (or on Rootcanal)
        /// and a manager on it; always stops both.
        private func withPeripheral(controller: InteropController = .bumble,
                                    _ body: (BumbleRig, PeripheralManager) async throws -> Void) async throws {
            try await withBumbleRig(script: .central, controller: controller) { central in
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    try await body(central, manager)
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }
}
