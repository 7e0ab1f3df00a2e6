import Bluejay
import Foundation

// `BluejayGuestApp --service-changed --hci bluez --name NAME`: Service Changed over the
// backend, for the BlueZ guest test. It connects, reads the serial number, and writes the body
// sensor location (5) to tell the test it is ready; the test adds a service to the peripheral,
// which indicates Service Changed. The app waits for `servicesModified` and reads the new
// service's characteristic. Steps: `ready`, `found`, `connected`, `modified` (with
// `invalidated`), `read` (the new value, UTF-8), `disconnected`; a failure prints `error`.

enum GuestServiceChanged {
    static let added = CharacteristicIdentifier(uuid: "6E400102-B5A3-F393-E0A9-E50E24DCCA9E",
                                                service: ServiceIdentifier(uuid: "6E400101-B5A3-F393-E0A9-E50E24DCCA9E"))

    static func run(_ bluejay: Bluejay) async throws {
        let name = option("--name", default: "Bluejay Peer 1")
        let peripheral = try await findPeripheral(named: name, with: bluejay)
        let events = bluejay.connectionEvents()
        try await bluejay.connect(peripheral, timeout: .seconds(30))
        emit("connected")
        let _: String = try await bluejay.read(from: serialNumber)
        try await bluejay.write(to: bodySensorLocation, value: UInt8(5))

        // Bounded: the test adds the service as soon as it sees the write.
        let modified = await within(.seconds(90)) { () async -> [String]? in
            for await event in events {
                if case let .servicesModified(_, invalidated) = event { return invalidated.map { $0.uuid.map(\.uuidString) ?? "?" } }
            }
            return nil
        }
        guard let modified else { throw AppFailure(description: "no Service Changed within 90 s") }
        emit("modified", ["invalidated": modified])
        let value: String = try await bluejay.read(from: added)
        emit("read", ["value": value])
        try await bluejay.disconnect()
        emit("disconnected")
    }
}
