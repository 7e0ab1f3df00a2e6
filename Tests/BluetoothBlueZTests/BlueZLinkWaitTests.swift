@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
@testable import DBus
import Testing

/// What waits on a BlueZ link (its services resolved, its end) hears the event it waits for,
/// the link's loss, or its cancellation, and nothing is left waiting. BlueZ's side is the
/// signals a central handles; no bus is needed.
@Suite("BlueZ: waiting on a link", .timeLimit(.minutes(1)))
struct BlueZLinkWaitTests {
    static let device = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_08")
    static let service = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_08/service0010")
    /// A primary service's GattService1 properties: Battery, Device Information.
    static let battery = primaryService("0000180f-0000-1000-8000-00805f9b34fb")
    static let deviceInformation = primaryService("0000180a-0000-1000-8000-00805f9b34fb")

    private static func primaryService(_ uuid: String) -> [String: DBusValue] {
        ["UUID": .variant(.string(uuid)), "Primary": .variant(.boolean(true))]
    }

    private static func connected() -> ConnectedDevice {
        ConnectedDevice(device, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_08), type: .random),
                        properties: ["ServicesResolved": .variant(.boolean(false))],
                        objects: [service: [BlueZ.gattService: Self.battery]])
    }

    /// Expects `database` to end with HostError.disconnected.
    private static func expectDisconnected(_ database: Task<BlueZGATTDatabase, any Error>,
                                           sourceLocation: SourceLocation = #_sourceLocation) async {
        await #expect(sourceLocation: sourceLocation) {
            _ = try await database.value
        } throws: { error in
            if case .disconnected = error as? HostError { return true }
            return false
        }
    }

    /// Returns once `count` tasks wait on the link.
    private static func whenWaiting(_ link: BlueZConnection, _ count: Int) async {
        while link.waiterCount < count { await Task.yield() }
    }

    @Test("database() waits for ServicesResolved, then has the services")
    func servicesResolved() async throws {
        let connected = Self.connected()
        let link = connected.link
        let database = Task { try await link.database() }
        await Self.whenWaiting(link, 1)
        connected.changed(["ServicesResolved": .boolean(true)])
        let services = try await database.value.services
        #expect(services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F))])
        #expect(link.waiterCount == 0)
    }

    /// A link whose central's bus is `bluetoothd`, with ServicesResolved false and `objects`
    /// signalled so far, and a task asking for its database once ServicesResolved turns true.
    private static func resolving(served bluetoothd: WithholdingBluetoothd,
                                  signalled objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:])
        async throws -> (connected: ConnectedDevice, bus: DBusConnection, database: Task<BlueZGATTDatabase, any Error>) {
        var options = DBusConnection.Options()
        options.isBus = false
        let bus = try await DBusConnection.connect(to: bluetoothd.address, options: options)
        let connected = ConnectedDevice(device, peer: DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_08), type: .random),
                                        properties: ["ServicesResolved": .variant(.boolean(false))], objects: objects, bus: bus)
        let link = connected.link
        let database = Task { try await link.database() }
        await whenWaiting(link, 1)
        return (connected, bus, database)
    }

    /// bluetoothd may send ServicesResolved before the InterfacesAdded of the GATT objects
    /// (bluez/bluez#1489); a database built from the signals then lacked services. The objects
    /// are read with GetManagedObjects once services are resolved.
    @Test("ServicesResolved before the GATT objects' InterfacesAdded: database() has the services GetManagedObjects gives")
    func servicesResolvedBeforeTheirObjects() async throws {
        let unsignalled = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_08/service0020")
        let bluetoothd = try WithholdingBluetoothd(managedObjects: [
            Self.device: [BlueZ.device: ["Connected": .variant(.boolean(true)), "ServicesResolved": .variant(.boolean(true))]],
            Self.service: [BlueZ.gattService: Self.battery],
            unsignalled: [BlueZ.gattService: Self.deviceInformation],
        ])
        let (connected, bus, database) = try await Self.resolving(served: bluetoothd, signalled: [Self.service: [BlueZ.gattService: Self.battery]])
        defer { bus.close() }
        let link = connected.link
        connected.changed(["ServicesResolved": .boolean(true)])
        let services = try await database.value.services
        #expect(services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F)), BluetoothUUID(UInt16(0x180A))])
        // Its InterfacesAdded, late, changes nothing.
        connected.central.handle(.signal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesAdded",
                                         body: [DBusValue(unsignalled), DBusValue([BlueZ.gattService: Self.deviceInformation])]))
        #expect(try await link.database().services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F)), BluetoothUUID(UInt16(0x180A))])
        #expect(link.waiterCount == 0)
        withExtendedLifetime(bluetoothd) {}
    }

    @Test("GetManagedObjects refused: the database is built from the objects signalled")
    func objectsReadRefused() async throws {
        let bluetoothd = try WithholdingBluetoothd(managedObjects: nil)
        let (connected, bus, database) = try await Self.resolving(served: bluetoothd, signalled: [Self.service: [BlueZ.gattService: Self.battery]])
        defer { bus.close() }
        connected.changed(["ServicesResolved": .boolean(true)])
        #expect(try await database.value.services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F))])
        #expect(connected.link.waiterCount == 0)
    }

    /// GetManagedObjects answers with what bluetoothd had when it answered; a service removed
    /// since (its InterfacesRemoved handled before the answer) must not come back.
    @Test("A service removed while GetManagedObjects is under way is not brought back by its answer")
    func removedDuringTheRead() async throws {
        let removed = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_08/service0020")
        let bluetoothd = try WithholdingBluetoothd(managedObjects: [
            Self.service: [BlueZ.gattService: Self.battery],
            removed: [BlueZ.gattService: Self.deviceInformation],
        ], holdingManagedObjects: true)
        var calls = bluetoothd.calls.makeAsyncIterator()
        let (connected, bus, database) = try await Self.resolving(served: bluetoothd, signalled: [Self.service: [BlueZ.gattService: Self.battery]])
        defer { bus.close() }
        connected.changed(["ServicesResolved": .boolean(true)])
        #expect(await calls.next() == "ObjectManager.GetManagedObjects")
        connected.central.handle(.signal(path: .root, interface: DBusConnection.objectManagerInterface, member: "InterfacesRemoved",
                                         body: [DBusValue(removed), DBusValue([BlueZ.gattService])]))
        bluetoothd.releaseManagedObjects()
        #expect(try await database.value.services.map(\.service.uuid) == [BluetoothUUID(UInt16(0x180F))])
        #expect(connected.central.tree().properties(removed, BlueZ.gattService) == nil)
    }

    @Test("The link lost while GetManagedObjects is under way: database() throws disconnected and the answer adds nothing")
    func linkLostDuringTheRead() async throws {
        let late = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_08/service0020")
        let bluetoothd = try WithholdingBluetoothd(managedObjects: [
            late: [BlueZ.gattService: Self.deviceInformation],
        ], holdingManagedObjects: true)
        var calls = bluetoothd.calls.makeAsyncIterator()
        let (connected, bus, database) = try await Self.resolving(served: bluetoothd)
        defer { bus.close() }
        let link = connected.link
        connected.changed(["ServicesResolved": .boolean(true)])
        #expect(await calls.next() == "ObjectManager.GetManagedObjects")
        connected.changed(["Connected": .boolean(false)])
        await Self.expectDisconnected(database)
        bluetoothd.releaseManagedObjects()
        // The answer, once in, adds nothing to the tree of a link that ended.
        while link.isResolving { await Task.yield() }
        #expect(connected.central.tree().properties(late, BlueZ.gattService) == nil)
        #expect(link.waiterCount == 0)
    }

    @Test("The link lost: database() throws disconnected, waitForDisconnection() has the reason")
    func linkLost() async throws {
        let connected = Self.connected()
        let link = connected.link
        let database = Task { try await link.database() }
        let ended = Task { try await link.waitForDisconnection() }
        await Self.whenWaiting(link, 2)
        connected.central.handle(.signal(path: Self.device, interface: BlueZ.device, member: "Disconnected",
                               body: [.string("org.bluez.Reason.Remote"), .string("Connection terminated by remote user")]))
        connected.changed(["Connected": .boolean(false)])
        await Self.expectDisconnected(database)
        #expect(try await ended.value == .remoteUserTerminatedConnection)
        #expect(try await link.waitForDisconnection() == .remoteUserTerminatedConnection, "a link already down answers at once")
        #expect(link.waiterCount == 0)
    }

    @Test("A wait begun by a task already cancelled throws at once and leaves nothing behind")
    func cancelledBeforeWaiting() async throws {
        let connected = Self.connected()
        let link = connected.link
        let database = Task { () async throws -> BlueZGATTDatabase in
            while !Task.isCancelled { await Task.yield() }
            return try await link.database()
        }
        database.cancel()
        await #expect(throws: CancellationError.self) { _ = try await database.value }
        withExtendedLifetime(connected) { #expect(link.waiterCount == 0) }
    }

    @Test("Cancelled waits throw CancellationError and leave nothing behind; the link stays up")
    func cancelled() async throws {
        let connected = Self.connected()
        let link = connected.link
        let database = Task { try await link.database() }
        let ended = Task { try await link.waitForDisconnection() }
        await Self.whenWaiting(link, 2)
        database.cancel()
        ended.cancel()
        await #expect(throws: CancellationError.self) { _ = try await database.value }
        await #expect(throws: CancellationError.self) { _ = try await ended.value }
        withExtendedLifetime(connected) {
            #expect(link.waiterCount == 0)
            #expect(link.isConnected)
        }
    }
}
