import DBus

/// BlueZ's bus name and interfaces (BlueZ 5.66, doc/*-api.txt).
enum BlueZ {
    static let service = "org.bluez"
    static let root = DBusObjectPath(uncheckedPath: "/org/bluez")
    static let adapter = "org.bluez.Adapter1"
    static let device = "org.bluez.Device1"
    static let gattService = "org.bluez.GattService1"
    static let gattCharacteristic = "org.bluez.GattCharacteristic1"
    static let gattDescriptor = "org.bluez.GattDescriptor1"
    /// The interfaces of a remote device's GATT objects, in the order a database is built.
    static let gattInterfaces = [gattService, gattCharacteristic, gattDescriptor]
    static let gattManager = "org.bluez.GattManager1"
    static let advertisingManager = "org.bluez.LEAdvertisingManager1"
    static let agentManager = "org.bluez.AgentManager1"
    static let agent = "org.bluez.Agent1"
}

extension DBusObjectPath {
    /// A path this module builds from parts it knows to be valid; an invalid one becomes `/`
    /// (which names nothing of BlueZ's, so a call to it fails with a clear error).
    init(uncheckedPath text: String) {
        self = (try? DBusObjectPath(text)) ?? .root
    }
}
