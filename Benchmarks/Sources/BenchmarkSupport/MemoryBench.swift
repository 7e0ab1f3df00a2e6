import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import CHeapUsage
import Foundation

/// Memory per connection of our central, with the peripherals in another process so that
/// only the central's memory is counted.
///
/// `serve` (the child) runs a virtual link with `count` peripherals, each with a realistic
/// database (GAP, GATT, Battery, Device Information, and a service of 10 notifiable
/// characteristics: 8 services' worth of attributes, 43 handles), and serves the central's
/// controller over HCI/TCP. `measure` (the parent) starts our host on that TCP transport,
/// takes the heap in use (glibc's mallinfo2) and the resident set, then connects to every
/// peripheral, discovers its whole database, and reports the growth per connection; then it
/// subscribes to the 10 characteristics of each and reports again.
public enum MemoryBench {
    public static let notifyService = BluetoothUUID(UInt16(0xFFE0))

    /// The address of peripheral `index`.
    static func address(_ index: Int) -> BluetoothAddress {
        BluetoothAddress(bytes: [0xC0, 0xBE, 0x00, 0x00, 0x00, UInt8(truncatingIfNeeded: index + 1)]) ?? .zero
    }

    static func database() -> [GATTServiceDefinition] {
        [
            GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), characteristics: [
                GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read, .notify], value: [87]),
            ]),
            GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180A)), characteristics: [
                GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A29)), properties: [.read], value: Array("Bluejay".utf8)),
                GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A24)), properties: [.read], value: Array("Bench-1".utf8)),
                GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A25)), properties: [.read], value: Array("SN-0001".utf8)),
            ]),
            GATTServiceDefinition(uuid: notifyService, characteristics: (0..<10).map { index in
                GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0xFFE1 + index)), properties: [.read, .notify], value: [UInt8(index)])
            }),
        ]
    }

    /// The child: serves the central's controller, prints its transport, then `ready`, and
    /// runs until its standard input closes.
    public static func serve(count: Int) async throws {
        let link = VirtualLink(configuration: .init(timeScale: 50))
        let central = link.addController(name: "central", address: BluetoothAddress("C0:BE:00:00:01:00") ?? .zero,
                                         configuration: .init(maximumConnections: count))
        let server = VirtualControllerServer(controller: central, logger: quietLogger("bench.memory.server"))
        _ = try server.start()
        var peripherals: [LEHost] = []
        for index in 0..<count {
            let controller = link.addController(name: "peripheral-\(index)", address: address(index))
            let host = LEHost(transport: controller.makeTransport(), logger: quietLogger("bench.memory.peripheral"))
            try await host.powerOn()
            for service in database() { _ = try await host.server.addService(service) }
            try await host.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                            parameters: AdvertisingParameters(intervalRange: 0x0020...0x0020))
            peripherals.append(host)
        }
        FileHandle.standardOutput.write(Data("\(server.transportSpecification ?? "tcp:?")\nready\n".utf8))
        while readLine() != nil {}
        server.stop()
        for host in peripherals { await host.shutdown() }
        link.shutdown()
    }

    public struct Result: Sendable {
        public var connections: Int
        /// Connected, before anything is discovered.
        public var heapPerConnectionConnected: Double
        /// Connected, the whole database discovered (and kept, as an app keeps it).
        public var heapPerConnection: Double
        public var residentPerConnection: Double
        public var heapPerConnectionSubscribed: Double
        public var residentPerConnectionSubscribed: Double
        public var subscriptionsPerConnection: Int
    }

    /// The parent: starts `executable serve-memory COUNT`, connects to its peripherals and
    /// measures.
    public static func measure(count: Int, executable: String) async throws -> Result {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: executable)
        child.arguments = ["memory-serve", String(count)]
        let input = Pipe()
        let output = Pipe()
        child.standardInput = input
        child.standardOutput = output
        try child.run()
        defer {
            try? input.fileHandleForWriting.close()
            child.waitUntilExit()
        }
        var lines: [String] = []
        var buffered = Data()
        while !lines.contains("ready") {
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw BenchmarkSetupError("the peripheral process ended before it was ready") }
            buffered += chunk
            lines = String(decoding: buffered, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        guard let specification = lines.first(where: { $0.hasPrefix("tcp:") }) else { throw BenchmarkSetupError("no transport line") }

        let host = LEHost(transport: try SystemTransports.open(specification), logger: quietLogger("bench.memory.central"))
        try await host.powerOn()
        let start = MemoryUse.now()
        var links: [Connection] = []
        for index in 0..<count {
            links.append(try await host.connect(to: DeviceAddress(address(index), type: .public), timeout: .seconds(30)))
        }
        let connected = MemoryUse.now()
        var connections: [(Connection, [GATTDiscoveredService])] = []
        for connection in links {
            connections.append((connection, try await connection.gatt.discoverDatabase()))
        }
        let discovered = MemoryUse.now()
        var subscriptions: [GATTNotificationSubscription] = []
        for (connection, database) in connections {
            guard let service = database.first(where: { $0.service.uuid == notifyService }) else {
                throw BenchmarkSetupError("the notify service was not discovered")
            }
            for characteristic in service.characteristics {
                subscriptions.append(try await connection.gatt.subscribe(to: characteristic.characteristic) { values in blackHoleValues(values) })
            }
        }
        let subscribed = MemoryUse.now()
        let perConnection = Double(count)
        let result = Result(
            connections: count,
            heapPerConnectionConnected: Double(connected.heap - start.heap) / perConnection,
            heapPerConnection: Double(discovered.heap - start.heap) / perConnection,
            residentPerConnection: Double(discovered.resident - start.resident) / perConnection,
            heapPerConnectionSubscribed: Double(subscribed.heap - start.heap) / perConnection,
            residentPerConnectionSubscribed: Double(subscribed.resident - start.resident) / perConnection,
            subscriptionsPerConnection: subscriptions.count / max(count, 1))
        for subscription in subscriptions { subscription.cancel() }
        withExtendedLifetime(connections) {}
        await host.shutdown()
        return result
    }
}

@inline(never) func blackHoleValues(_ values: [GATTValue]) { _ = values.count }

/// The heap in use (glibc's mallinfo2: small blocks plus mmapped ones) and the resident set.
struct MemoryUse {
    var heap: Int
    var resident: Int

    static func now() -> MemoryUse {
        let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
        let statm = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8)) ?? ""
        let residentPages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return MemoryUse(heap: Int(bluejay_heap_in_use()), resident: residentPages * pageSize)
    }
}
