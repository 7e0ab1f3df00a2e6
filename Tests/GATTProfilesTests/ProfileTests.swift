import BluetoothCore
import GATTProfiles
import Testing

private struct NumberService: ServiceConfigurable {
    static let uuid = BluetoothUUID("F000AA10-0451-4000-B000-0000000000AA")
    static let name = "Number Service"
    static let tag = "Tests"
}

private struct Number: RawDeserializable, CharacteristicConfigurable, StringDeserializable {
    static let uuid = BluetoothUUID("F000AA12-0451-4000-B000-0000000000AA")
    static let name = "Number"
    static let properties: CharacteristicProperties = [.read, .write]
    static let permissions: ProfileAttributePermissions = .readWrite
    static let initialValue: [UInt8]? = Int16(22).serialize()
    static let stringValues: [String] = []

    let rawValue: Int16
    init?(rawValue: Int16) { self.rawValue = rawValue }

    var stringValue: [String: String] { [Self.name: String(rawValue)] }
    init?(stringValue: [String: String]) {
        guard let value = stringValue[Self.name].flatMap({ Int16(stringValue: $0) }) else { return nil }
        self.rawValue = value
    }
}

private struct Label: CharacteristicConfigurable {
    static let uuid = BluetoothUUID(UInt16(0x2A25))
    static let name = "Label"
    static let properties: CharacteristicProperties = [.read]
    static let permissions: ProfileAttributePermissions = .readable
    static let initialValue: [UInt8]? = Array("AAA11".utf8)
}

@Suite("Profiles: configuration, text conversion, registry", .timeLimit(.minutes(1)))
struct ProfileTests {
    @Test("A raw characteristic profile carries its configuration and converts values to text and back")
    func rawProfile() throws {
        let profile = CharacteristicProfile.raw(Number.self)
        #expect(profile.uuid == Number.uuid && profile.name == "Number")
        #expect(profile.properties == [.read, .write] && profile.permissions == .readWrite)
        #expect(profile.initialValue == [22, 0])
        #expect(try profile.stringValue([0xFE, 0xFF]) == ["Number": "-2"])
        #expect(profile.bytes(stringValue: ["Number": "300"]) == [0x2C, 0x01])
        #expect(profile.bytes(stringValue: ["Number": "many"]) == nil)
        #expect(throws: SerdeError.wrongLength(type: "Int16", expected: 2, actual: 1)) { try profile.stringValue([1]) }
    }

    @Test("A string profile uses its encoding; an untyped profile shows hexadecimal")
    func stringAndHexProfiles() throws {
        let label = CharacteristicProfile.string(Label.self)
        #expect(try label.stringValue(Array("SN-7".utf8)) == ["Label": "SN-7"])
        #expect(label.bytes(stringValue: ["Label": "é"]) == [0xC3, 0xA9])
        let latin = CharacteristicProfile.string(Label.self, encoding: .ascii)
        #expect(latin.bytes(stringValue: ["Label": "é"]) == nil)
        #expect(throws: SerdeError.invalidText(encoding: .ascii)) { try latin.stringValue([0xFF]) }

        let raw = CharacteristicProfile(uuid: BluetoothUUID(UInt16(0xFFF1)), name: "Blob")
        #expect(try raw.stringValue([0x0A, 0xFF]) == ["Blob": "0aff"])
        #expect(raw.bytes(stringValue: ["Blob": "0A:ff"]) == [0x0A, 0xFF])
        #expect(raw.bytes(stringValue: ["Blob": "abc"]) == nil)
        #expect(raw.bytes(stringValue: ["Blob": "zz"]) == nil)
    }

    @Test("A service profile collects characteristics; adding one again replaces it")
    func serviceProfile() {
        var service = ServiceProfile(NumberService.self)
        service.addCharacteristic(.raw(Number.self))
        service.addCharacteristic(.string(Label.self))
        service.addCharacteristic(.raw(Number.self))
        #expect(service.characteristics.map(\.uuid) == [Label.uuid, Number.uuid])
        #expect(service.tag == "Tests")
        #expect(service.characteristic(Number.uuid)?.name == "Number")
    }

    @Test("The registry finds services and characteristics and falls back to hexadecimal")
    func registry() {
        var registry = ProfileRegistry.standard
        #expect(registry.service(BluetoothUUID(UInt16(0x180F)))?.name == "Battery")
        #expect(registry.characteristic(BluetoothUUID(UInt16(0x2A19)))?.name == "Battery Level")
        #expect(registry.stringValue([87], characteristic: BluetoothUUID(UInt16(0x2A19))) == ["Battery Level": "87"])
        // Out of range for Battery Level: shown raw.
        #expect(registry.stringValue([200], characteristic: BluetoothUUID(UInt16(0x2A19))) == ["Battery Level": "c8"])
        #expect(registry.stringValue([1, 2], characteristic: BluetoothUUID(UInt16(0xFFF9))) == ["FFF9": "0102"])

        registry.register(ServiceProfile(NumberService.self, characteristics: [.raw(Number.self)]))
        #expect(registry.services.last?.uuid == NumberService.uuid)
        #expect(registry.characteristic(Number.uuid, inService: NumberService.uuid) != nil)
        #expect(registry.characteristic(Number.uuid, inService: BluetoothUUID(UInt16(0x180F))) == nil)
        #expect(registry.stringValue([5, 0], characteristic: Number.uuid) == ["Number": "5"])
    }
}
