import BluetoothCore
import BluetoothHost
import DBus

/// The published services as a GATT application for BlueZ (doc/gatt-api.txt): one
/// `GattService1` object per service, a `GattCharacteristic1` per characteristic and a
/// `GattDescriptor1` per descriptor, below an object manager that
/// `GattManager1.RegisterApplication` reads.
///
/// BlueZ's GATT server serves them with handles of its own and checks each client's link
/// against the flags, which come from the attributes' permissions; it asks
/// ``BluetoothHost/GATTServer`` for values and writes. BlueZ makes the Client Characteristic
/// Configuration and Extended Properties descriptors itself, so ours are not exported.
struct BlueZGATTApplication: Sendable {
    static let root = DBusObjectPath(uncheckedPath: "/org/bluejay/app")

    /// One exported object.
    struct Object: Sendable {
        var path: DBusObjectPath
        var interface: String
        var properties: [String: DBusValue]
        /// The attribute it stands for, in our database.
        var handle: UInt16
    }

    /// The objects, in export order (services before their characteristics before their descriptors).
    var objects: [Object] = []
    /// The characteristic object of each value handle.
    var characteristicPaths: [UInt16: DBusObjectPath] = [:]

    /// The application for `services`; `policy` says what each attribute needs.
    init(services: [GATTPublishedService], policy: (UInt16) -> GATTAccessPolicy?) {
        for (serviceIndex, service) in services.enumerated() {
            let servicePath = DBusObjectPath(uncheckedPath: "\(Self.root)/service\(serviceIndex)")
            objects.append(Object(path: servicePath, interface: BlueZ.gattService, properties: [
                "UUID": .string(service.uuid.uuidString.lowercased()),
                "Primary": .boolean(service.isPrimary),
            ], handle: service.handleRange.lowerBound))
            for (characteristicIndex, characteristic) in service.characteristics.enumerated() {
                let path = DBusObjectPath(uncheckedPath: "\(servicePath)/char\(characteristicIndex)")
                characteristicPaths[characteristic.valueHandle] = path
                let flags = Self.characteristicFlags(characteristic.properties, policy(characteristic.valueHandle))
                objects.append(Object(path: path, interface: BlueZ.gattCharacteristic, properties: [
                    "UUID": .string(characteristic.uuid.uuidString.lowercased()),
                    "Service": .objectPath(servicePath),
                    "Flags": .array(of: .string, flags.map { .string($0) }),
                ], handle: characteristic.valueHandle))
                let exported = characteristic.descriptors.filter { !Self.madeByBlueZ.contains($0.uuid) }
                for (descriptorIndex, descriptor) in exported.enumerated() {
                    let descriptorPath = DBusObjectPath(uncheckedPath: "\(path)/desc\(descriptorIndex)")
                    objects.append(Object(path: descriptorPath, interface: BlueZ.gattDescriptor, properties: [
                        "UUID": .string(descriptor.uuid.uuidString.lowercased()),
                        "Characteristic": .objectPath(path),
                        "Flags": .array(of: .string, Self.descriptorFlags(policy(descriptor.handle)).map { .string($0) }),
                    ], handle: descriptor.handle))
                }
            }
        }
    }

    /// Client Characteristic Configuration (0x2902) and Characteristic Extended Properties (0x2900).
    static let madeByBlueZ: Set<BluetoothUUID> = [BluetoothUUID(UInt16(0x2902)), BluetoothUUID(UInt16(0x2900))]

    /// A characteristic's flags: its properties, and for each access what the link needs
    /// (`encrypt-`, `encrypt-authenticated-`, `secure-`: Secure Connections). What a pushed
    /// value needs is what a read needs (Core 6.0, Vol 3, Part C, 10.3.1): the `-notify` and
    /// `-indicate` flags carry the read's.
    static func characteristicFlags(_ properties: CharacteristicProperties, _ policy: GATTAccessPolicy?) -> [String] {
        var flags: [String] = []
        let named: [(CharacteristicProperties, String)] = [
            (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"), (.write, "write"),
            (.notify, "notify"), (.indicate, "indicate"), (.authenticatedSignedWrites, "authenticated-signed-writes"),
        ]
        for (property, name) in named where properties.contains(property) { flags.append(name) }
        guard let policy else { return flags }
        if properties.contains(.read) { flags += securityFlags(policy.read, access: "read") }
        if !properties.isDisjoint(with: [.write, .writeWithoutResponse]) { flags += securityFlags(policy.write, access: "write") }
        if properties.contains(.notify) { flags += securityFlags(policy.read, access: "notify") }
        if properties.contains(.indicate) { flags += securityFlags(policy.read, access: "indicate") }
        return flags
    }

    static func descriptorFlags(_ policy: GATTAccessPolicy?) -> [String] {
        guard let policy else { return ["read"] }
        var flags: [String] = []
        if policy.isReadable { flags += ["read"] + securityFlags(policy.read, access: "read") }
        if policy.isWritable { flags += ["write"] + securityFlags(policy.write, access: "write") }
        return flags
    }

    private static func securityFlags(_ requirement: GATTAccessPolicy.Requirement, access: String) -> [String] {
        if requirement.secureConnections { return ["secure-\(access)"] }
        if requirement.authentication { return ["encrypt-authenticated-\(access)"] }
        if requirement.encryption { return ["encrypt-\(access)"] }
        return []
    }

    /// The error a method answers BlueZ with for an ATT error. BlueZ turns the names back into
    /// ATT errors (src/gatt-database.c, dbus_error_to_att_ecode); an error it has no name for
    /// becomes `Failed`, which BlueZ answers as Unlikely Error.
    static func error(_ code: ATTErrorCode, _ what: String) -> DBusError {
        let name: DBusErrorName
        switch code {
        case .insufficientAuthorization: name = "org.bluez.Error.NotAuthorized"
        case .invalidAttributeValueLength: name = "org.bluez.Error.InvalidValueLength"
        case .invalidOffset: name = "org.bluez.Error.InvalidOffset"
        case .readNotPermitted, .writeNotPermitted: name = "org.bluez.Error.NotPermitted"
        case .requestNotSupported: name = "org.bluez.Error.NotSupported"
        default: name = "org.bluez.Error.Failed"
        }
        return .errorReply(name: name, message: "\(what): \(code)")
    }
}
