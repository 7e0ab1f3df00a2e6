import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation

// `BluejayGuestApp --peripheral --hci bluez --name NAME`: the peripheral role on BlueZ, for the
// BlueZ peripheral test (Tests/InteropTests/BlueZPeripheralGuestTests.swift). It publishes one
// service and advertises it; a Bumble central reads, writes and subscribes. Each step prints a
// JSON object: `advertising`, then `connected`, `written` (each write of the command, answered by
// the app), `setting` (each write of the setting, refused unless one octet),
// `subscribed`/`unsubscribed`, `pushed` (three notifications or two indications, sent as soon
// as a subscription comes), `disconnected` and `stopped`. The app ends when the first central
// that connected leaves; a failure prints `error` and exits 1.

enum GuestPeripheral {
    static let service = BluetoothUUID("6E400010-B5A3-F393-E0A9-E50E24DCCA9E")
    static let greeting = BluetoothUUID("6E400011-B5A3-F393-E0A9-E50E24DCCA9E")
    static let command = BluetoothUUID("6E400012-B5A3-F393-E0A9-E50E24DCCA9E")
    static let counter = BluetoothUUID("6E400013-B5A3-F393-E0A9-E50E24DCCA9E")
    static let alarm = BluetoothUUID("6E400014-B5A3-F393-E0A9-E50E24DCCA9E")
    static let secret = BluetoothUUID("6E400015-B5A3-F393-E0A9-E50E24DCCA9E")
    static let setting = BluetoothUUID("6E400016-B5A3-F393-E0A9-E50E24DCCA9E")

    static func run() async throws {
        let name = option("--name", default: "Bluejay Guest")
        let adapter: String? = {
            guard case let .bluez(adapter)? = try? TransportSpecification(parsing: option("--hci", default: "bluez")) else { return nil }
            return adapter
        }()
        let manager = PeripheralManager(backend: BlueZPeripheral(adapter: adapter, name: name))
        try await manager.powerOn()
        let published = try await manager.add(PeripheralService(uuid: try uuid(service), characteristics: [
            PeripheralCharacteristic(uuid: try uuid(greeting), properties: [.read], value: Array("hello from the guest".utf8)),
            PeripheralCharacteristic(uuid: try uuid(command), properties: [.write, .writeWithoutResponse]),
            PeripheralCharacteristic(uuid: try uuid(counter), properties: [.notify]),
            PeripheralCharacteristic(uuid: try uuid(alarm), properties: [.indicate]),
            PeripheralCharacteristic(uuid: try uuid(secret), properties: [.read], readSecurity: .encryption, value: Array("secret".utf8)),
            PeripheralCharacteristic(uuid: try uuid(setting), properties: [.write]),
        ]))
        guard let commandCharacteristic = published.characteristic(try uuid(command)),
              let counterCharacteristic = published.characteristic(try uuid(counter)),
              let alarmCharacteristic = published.characteristic(try uuid(alarm)),
              let settingCharacteristic = published.characteristic(try uuid(setting)) else {
            throw AppFailure(description: "the published service lacks a characteristic")
        }
        let writes = await manager.writeRequests(for: commandCharacteristic)
        let settings = await manager.writeRequests(for: settingCharacteristic)
        let subscriptions = await manager.subscriptionChanges()
        let connections = await manager.connectionEvents()
        try await manager.startAdvertising(name: name, serviceUUIDs: [try uuid(service)])
        emit("advertising", ["name": name])

        let writer = Task {
            for await request in writes {
                emit("written", ["value": request.value.map { String(format: "%02x", $0) }.joined(), "response": request.needsResponse])
                request.respond(.success)
            }
        }
        // The setting takes one octet: the app refuses any other length, and the central hears it.
        let settingWriter = Task {
            for await request in settings {
                let accepted = request.value.count == 1
                emit("setting", ["value": request.value.map { String(format: "%02x", $0) }.joined(), "response": request.needsResponse,
                                 "accepted": accepted])
                request.respond(accepted ? .success : .error(.invalidAttributeValueLength))
            }
        }
        let pusher = Task {
            for await change in subscriptions {
                let uuid = change.characteristic.uuid.uuidString
                emit(change.isSubscribed ? "subscribed" : "unsubscribed", ["uuid": uuid, "indicating": change.isIndicating])
                guard change.isSubscribed else { continue }
                let (target, values): (GATTPublishedCharacteristic, [[UInt8]]) = change.characteristic == counterCharacteristic
                    ? (counterCharacteristic, [[1], [2], [3]]) : (alarmCharacteristic, [[0xA1], [0xA2]])
                for value in values {
                    let result = try? await manager.updateValue(value, for: target)
                    emit("pushed", ["uuid": uuid, "value": value.map { String(format: "%02x", $0) }.joined(),
                                    "delivered": result?.delivered.count ?? -1])
                }
            }
        }
        var connected = false
        for await event in connections {
            switch event {
            case let .connected(central):
                connected = true
                emit("connected", ["address": central.address?.address.description ?? ""])
            case let .disconnected(central, _) where connected:
                emit("disconnected", ["address": central.address?.address.description ?? ""])
                writer.cancel()
                settingWriter.cancel()
                pusher.cancel()
                await manager.powerOff()
                return
            default:
                continue
            }
        }
        throw AppFailure(description: "the connection events ended")
    }

    private static func uuid(_ value: BluetoothUUID?) throws -> BluetoothUUID {
        guard let value else { throw AppFailure(description: "a UUID of the app does not parse") }
        return value
    }
}
