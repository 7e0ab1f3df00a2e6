@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// The identifiers the README examples use.
enum HeartRate {
    static let service = ServiceIdentifier(uuid: "180D")
    static let measurement = CharacteristicIdentifier(uuid: "2A37", service: service)
    static let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: service)
    static let batteryService = ServiceIdentifier(uuid: "180F")
    static let batteryLevel = CharacteristicIdentifier(uuid: "2A19", service: batteryService)
    static let userDescription = DescriptorIdentifier(uuid: "2901", characteristic: bodySensorLocation)
    static let slowService = ServiceIdentifier(uuid: "FFF0")
    static let slow = CharacteristicIdentifier(uuid: "FFF1", service: slowService)
}

/// A heart-rate peripheral on a virtual controller: a host of our own stack with a GATT
/// server, advertising until a central connects and again after it leaves.
/// Not a `TwoDevices`: the central is a Bluejay app, which makes its own host on a transport
/// (``startBluejay(on:name:options:)``), and a link may carry several of these peripherals.
final class VirtualPeripheral: Sendable {
    let host: LEHost
    let controller: VirtualController
    let name: String
    /// Holds every read of the slow characteristic (FFF1) until the test opens it.
    let slowAnswers: TestGate
    private let handles: Mutex<[BluetoothUUID: UInt16]> = Mutex([:])

    var identifier: PeripheralIdentifier { PeripheralIdentifier(address: DeviceAddress(controller.address, type: .public), name: name) }

    private init(host: LEHost, controller: VirtualController, name: String, slowAnswers: TestGate) {
        self.host = host
        self.controller = controller
        self.name = name
        self.slowAnswers = slowAnswers
    }

    static func start(on link: VirtualLink, name: String, address: String, identityResolvingKey: UInt128? = nil) async throws -> VirtualPeripheral {
        let controller = link.addController(name: name, address: try #require(BluetoothAddress(address)))
        var configuration = HostConfiguration()
        configuration.deviceName = name
        configuration.identityResolvingKey = identityResolvingKey
        let host = LEHost(transport: controller.makeTransport(), configuration: configuration)
        try await host.powerOn()
        let slowAnswers = TestGate()
        let peripheral = VirtualPeripheral(host: host, controller: controller, name: name, slowAnswers: slowAnswers)
        let heartRate = try await host.server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.notify]),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A38)), properties: [.read, .write], value: [0x01],
                                         maximumValueLength: 1, userDescription: "Body Sensor Location"),
        ]))
        let battery = try await host.server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read, .notify], value: [87]),
        ]))
        // A characteristic that answers when the test opens its gate, for time limits.
        let slow = try await host.server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0xFFF0)), characteristics: [
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFFF1)), properties: [.read], onRead: { _ in
                do { try await slowAnswers.wait() } catch { return .error(.unlikelyError) }
                return .value([0x5A])
            }),
        ]))
        peripheral.handles.withLock { handles in
            for characteristic in heartRate.characteristics + battery.characteristics + slow.characteristics {
                handles[characteristic.uuid] = characteristic.valueHandle
            }
        }
        try await peripheral.advertise()
        return peripheral
    }

    func advertise() async throws {
        try await host.startAdvertising(
            AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), .serviceUUIDs16([0x180D], complete: true)]),
            scanResponse: AdvertisingData([.completeLocalName(name)]),
            parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030, restartsAfterDisconnection: true))
    }

    /// Sends a notification to every connected central that subscribed.
    func notify(_ uuid: UInt16, _ value: [UInt8]) async throws {
        let handle = try #require(handles.withLock { $0[BluetoothUUID(uuid)] })
        for subscription in await host.server.subscriptions(forHandle: handle) {
            try await host.server.notify(value, forHandle: handle, connectionHandle: subscription.connectionHandle)
        }
    }

    /// How many centrals subscribed to the characteristic.
    func subscriberCount(_ uuid: UInt16) async -> Int {
        guard let handle = handles.withLock({ $0[BluetoothUUID(uuid)] }) else { return 0 }
        return await host.server.subscriptions(forHandle: handle).count
    }

    func value(_ uuid: UInt16) async -> [UInt8]? {
        guard let handle = handles.withLock({ $0[BluetoothUUID(uuid)] }) else { return nil }
        return await host.server.value(forHandle: handle)
    }

    /// Ends every link from this side.
    func disconnectAll() async {
        for connection in await host.connections { try? await connection.disconnect() }
    }

    func shutdown() async {
        await host.shutdown()
    }
}

/// A Bluejay on its own controller of `link`, started and ready.
func startBluejay(on link: VirtualLink, name: String = "central", options: (inout StartOptions) -> Void = { _ in }) async throws -> Bluejay {
    let controller = link.addController(name: name, address: try #require(BluetoothAddress("C0:00:00:00:00:01")))
    var startOptions = StartOptions(transport: .transport(controller.makeTransport()))
    options(&startOptions)
    let bluejay = Bluejay()
    bluejay.start(mode: .new(startOptions))
    try await bluejay.waitUntilReady()
    return bluejay
}

/// Collects what observers and handlers are told.
final class EventLog: ConnectionObserver, DisconnectHandler, ServiceObserver, ListenRestorer, BackgroundRestorer, RSSIObserver, LogObserver, Sendable {
    private let entries = Mutex<[String]>([])
    let reconnectAnswer = Mutex<AutoReconnectMode>(.noChange)
    let restoreAnswer = Mutex<ListenRestoreAction>(.promiseRestoration)
    let onUnhandledListen = Mutex<(@Sendable (CharacteristicIdentifier, Data?) -> Void)?>(nil)

    func add(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
    func count(_ prefix: String) -> Int { all.filter { $0.hasPrefix(prefix) }.count }

    func bluetoothAvailable(_ available: Bool) { add("available \(available)") }
    func connected(to peripheral: PeripheralIdentifier) { add("connected \(peripheral.address)") }
    func disconnected(from peripheral: PeripheralIdentifier) { add("disconnected \(peripheral.address)") }

    func didDisconnect(from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool) -> AutoReconnectMode {
        add("handler \(error == nil ? "expected" : "unexpected") willReconnect=\(autoReconnect)")
        return reconnectAnswer.withLock { $0 }
    }

    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier]) {
        add("services modified \(invalidatedServices.map(\.description))")
    }

    func didReceiveUnhandledListen(from peripheral: PeripheralIdentifier, on characteristic: CharacteristicIdentifier, with value: Data?) -> ListenRestoreAction {
        add("unhandled \(characteristic.uuidString) \(value.map { Array($0) } ?? [])")
        onUnhandledListen.withLock { $0 }?(characteristic, value)
        return restoreAnswer.withLock { $0 }
    }

    func didRestoreConnection(to peripheral: PeripheralIdentifier) -> BackgroundRestoreCompletion {
        add("restored \(peripheral.address)")
        return .callback { [self] in self.add("restore callback") }
    }

    func didFailToRestoreConnection(to peripheral: PeripheralIdentifier, error: any Error) -> BackgroundRestoreCompletion {
        add("restore failed \(peripheral.address): \(error)")
        return .continue
    }

    func didReadRSSI(from peripheral: PeripheralIdentifier, RSSI: Int, error: (any Error)?) {
        add("rssi \(error == nil ? "\(RSSI)" : "error")")
    }

    func debug(_ text: String) { add("log \(text)") }
}
