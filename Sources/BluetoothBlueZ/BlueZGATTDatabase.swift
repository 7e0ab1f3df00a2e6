import BluetoothCore
import BluetoothHost
import DBus

/// A connected device's GATT database as BlueZ shows it (GattService1, GattCharacteristic1,
/// GattDescriptor1 objects), made into our GATT value types, with the object path of each
/// handle for the calls.
///
/// Handles: BlueZ names its objects by them (`service000a` its start handle, `char000b` the
/// characteristic's declaration, `desc000d` the descriptor's handle, in hex) and gives the
/// characteristic's value handle as `Handle` where it has that property; without it the value
/// follows its declaration (Core 6.0, Vol 3, Part G, 3.3: the value attribute comes right after
/// the declaration). A service ends where the next begins (the last, at its last attribute),
/// a characteristic where the next is declared.
struct BlueZGATTDatabase: Sendable, Equatable {
    private(set) var services: [GATTDiscoveredService] = []
    /// The object path of each characteristic (by value handle) and descriptor (by handle).
    private(set) var characteristicPaths: [UInt16: DBusObjectPath] = [:]
    private(set) var descriptorPaths: [UInt16: DBusObjectPath] = [:]
    /// Characteristic properties BlueZ gives that ours have no bit for (`encrypt-read`, …), by value handle.
    private(set) var blueZFlags: [UInt16: [String]] = [:]

    init() {}

    init(tree: BlueZObjectTree, device: DBusObjectPath) {
        struct Service { var path: DBusObjectPath; var uuid: BluetoothUUID; var primary: Bool; var start: UInt16 }
        struct Characteristic { var path: DBusObjectPath; var service: DBusObjectPath; var uuid: BluetoothUUID; var declaration: UInt16
            var value: UInt16; var flags: [String] }
        struct Descriptor { var path: DBusObjectPath; var characteristic: DBusObjectPath; var uuid: BluetoothUUID; var handle: UInt16 }
        var services: [Service] = []
        var characteristics: [Characteristic] = []
        var descriptors: [Descriptor] = []
        for (path, interface, properties) in tree.gattObjects(of: device) {
            guard let uuid = properties["UUID"]?.stringValue.flatMap(BluetoothUUID.init) else { continue }
            let named = Self.handle(in: path)
            switch interface {
            case BlueZ.gattService:
                guard let start = properties["Handle"]?.uint16Value ?? named else { continue }
                services.append(Service(path: path, uuid: uuid, primary: properties["Primary"]?.boolValue ?? true, start: start))
            case BlueZ.gattCharacteristic:
                guard let declaration = named, let service = properties["Service"]?.objectPathValue ?? path.parent else { continue }
                let value = properties["Handle"]?.uint16Value ?? declaration &+ 1
                let flags = properties["Flags"]?.arrayValue?.compactMap(\.stringValue) ?? []
                characteristics.append(Characteristic(path: path, service: service, uuid: uuid, declaration: declaration, value: value, flags: flags))
            case BlueZ.gattDescriptor:
                guard let handle = properties["Handle"]?.uint16Value ?? named,
                      let owner = properties["Characteristic"]?.objectPathValue ?? path.parent else { continue }
                descriptors.append(Descriptor(path: path, characteristic: owner, uuid: uuid, handle: handle))
            default:
                continue
            }
        }
        services.sort { $0.start < $1.start }
        for (index, service) in services.enumerated() {
            let owned = characteristics.filter { $0.service == service.path }.sorted { $0.declaration < $1.declaration }
            let ownedDescriptors = descriptors.filter { descriptor in owned.contains { $0.path == descriptor.characteristic } }
            let lastInside = max(service.start, owned.map(\.value).max() ?? 0, ownedDescriptors.map(\.handle).max() ?? 0)
            let end = index + 1 < services.count ? max(lastInside, services[index + 1].start &- 1) : lastInside
            var discovered: [GATTDiscoveredCharacteristic] = []
            for (position, characteristic) in owned.enumerated() {
                let characteristicEnd = position + 1 < owned.count ? owned[position + 1].declaration &- 1 : end
                let found = GATTCharacteristic(uuid: characteristic.uuid, properties: Self.properties(characteristic.flags),
                                               declarationHandle: characteristic.declaration, valueHandle: characteristic.value,
                                               endHandle: max(characteristic.value, characteristicEnd))
                let ownDescriptors = descriptors.filter { $0.characteristic == characteristic.path }.sorted { $0.handle < $1.handle }
                discovered.append(GATTDiscoveredCharacteristic(characteristic: found,
                                                               descriptors: ownDescriptors.map { GATTDescriptor(uuid: $0.uuid, handle: $0.handle) }))
                characteristicPaths[characteristic.value] = characteristic.path
                blueZFlags[characteristic.value] = characteristic.flags
                for descriptor in ownDescriptors { descriptorPaths[descriptor.handle] = descriptor.path }
            }
            self.services.append(GATTDiscoveredService(
                service: GATTService(uuid: service.uuid, isPrimary: service.primary, handleRange: service.start...end), characteristics: discovered))
        }
    }

    /// The handle in an object's last path element (`char000b` → 0x000B).
    static func handle(in path: DBusObjectPath) -> UInt16? {
        guard let last = path.elements.last else { return nil }
        for prefix in ["service", "char", "desc"] where last.hasPrefix(prefix) {
            let hex = last.dropFirst(prefix.count)
            guard hex.count == 4 else { return nil }
            return UInt16(hex, radix: 16)
        }
        return nil
    }

    /// BlueZ's characteristic flags (doc/gatt-api.txt) as our property bits.
    static func properties(_ flags: [String]) -> CharacteristicProperties {
        var properties: CharacteristicProperties = []
        for flag in flags {
            switch flag {
            case "broadcast": properties.insert(.broadcast)
            case "read": properties.insert(.read)
            case "write-without-response": properties.insert(.writeWithoutResponse)
            case "write": properties.insert(.write)
            case "notify": properties.insert(.notify)
            case "indicate": properties.insert(.indicate)
            case "authenticated-signed-writes": properties.insert(.authenticatedSignedWrites)
            case "extended-properties", "reliable-write", "writable-auxiliaries": properties.insert(.extendedProperties)
            default: continue  // encrypt-read and the like: security, not properties
            }
        }
        return properties
    }

    var isEmpty: Bool { services.isEmpty }
}
