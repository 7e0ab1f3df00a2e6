import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothTransport
import Foundation
import FuzzSupport

/// The strings a user, a command line or a saved file hands the stack: UUIDs, addresses,
/// peripheral and GATT identifiers, transport specifications and hex. Parsing never traps,
/// and whatever parses prints as text that parses to the same value (so a value saved or
/// logged can be read back), in every form the type prints.
///
/// Input: the text, as UTF-8 (invalid sequences become U+FFFD, as Swift reads them).
runFuzzer { input in
    let text = String(decoding: input.rest(), as: UTF8.self)

    if let uuid = BluetoothUUID(text) {
        fuzzCheck(BluetoothUUID(uuid.description) == uuid, "UUID \"\(text)\" prints as \"\(uuid.description)\", which parses differently")
        fuzzCheck(BluetoothUUID(uuid.uuidString) == uuid, "UUID \"\(text)\" prints as \"\(uuid.uuidString)\", which parses differently")
        fuzzCheck([4, 8, 36].contains(uuid.description.count), "UUID \"\(text)\" prints as \"\(uuid.description)\"")
        fuzzCheck(BluetoothUUID(littleEndianBytes: uuid.attBytes) == uuid, "UUID \(uuid) does not round-trip through its ATT bytes")
        fuzzCheck(BluetoothUUID(bigEndianBytes: uuid.bigEndianBytes) == uuid, "UUID \(uuid) does not round-trip through its bytes")
        if let json = try? JSONEncoder().encode([uuid]) {
            fuzzCheck((try? JSONDecoder().decode([BluetoothUUID].self, from: json)) == [uuid], "UUID \(uuid) does not round-trip through JSON")
        }
    }
    let service = ServiceIdentifier(uuid: text)
    fuzzCheck(ServiceIdentifier(uuid: service.uuidString) == service, "service \"\(text)\" does not round-trip as \"\(service.uuidString)\"")
    let characteristic = CharacteristicIdentifier(uuid: text, service: service)
    fuzzCheck(CharacteristicIdentifier(uuid: characteristic.uuidString, service: service) == characteristic,
              "characteristic \"\(text)\" does not round-trip as \"\(characteristic.uuidString)\"")
    _ = characteristic.description

    if let address = BluetoothAddress(text) {
        fuzzCheck(BluetoothAddress(address.description) == address, "address \"\(text)\" prints as \"\(address)\", which parses differently")
    }
    if let address = DeviceAddress(text) {
        fuzzCheck(DeviceAddress(address.description) == address, "address \"\(text)\" prints as \"\(address)\", which parses differently")
    }
    if let peripheral = PeripheralIdentifier(string: text) {
        fuzzCheck(PeripheralIdentifier(string: peripheral.stringValue) == peripheral,
                  "peripheral \"\(text)\" prints as \"\(peripheral.stringValue)\", which parses differently")
    }
    if let transport = try? TransportSpecification(parsing: text) {
        let again = try? TransportSpecification(parsing: transport.description)
        fuzzCheck(again == transport, "transport \"\(text)\" parses as \(transport), prints as \"\(transport)\", which parses as \(String(describing: again))")
    }
    if let bytes = Hex.decode(text) {
        fuzzCheck(Hex.decode(Hex.encode(bytes)) == bytes, "hex \"\(text)\" does not round-trip")
        fuzzCheck(Hex.decode(Hex.encode(bytes, separator: " ")) == bytes, "hex \"\(text)\" does not round-trip with spaces")
    }
}
