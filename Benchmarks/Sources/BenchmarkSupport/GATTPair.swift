import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Logging
import Synchronization

/// Bluejay's `GATTClient` wired to Bluejay's `GATTServer` in memory, as
/// Tests/BluetoothHostTests/GATTServerHarnessTests.swift does: what one sends, the other
/// receives through its public entry point, and the "controller" takes every PDU at once.
/// Neither side exchanges the MTU: the bearer stays at 23.
public final class GATTPair: Sendable {
    public static let connectionHandle: UInt16 = 0x0040
    public static let serviceUUID = BluetoothUUID(UInt16(0xFFF0))
    public static let readUUID = BluetoothUUID(UInt16(0xFFF1))
    public static let notifyUUID = BluetoothUUID(UInt16(0xFFF2))
    public static let writeUUID = BluetoothUUID(UInt16(0xFFF3))
    /// The value read back: 20 octets, so that one Read Request carries it at MTU 23.
    public static let readValue: [UInt8] = (0..<20).map { UInt8($0 * 7 & 0xFF) }
    /// The value notified: 20 octets (ATT_MTU − 3).
    public static let notifyValue: [UInt8] = (0..<20).map { UInt8(0xA0 &+ $0) }
    /// The value written with prepared writes: 512 octets, 29 Prepare Write Requests at MTU 23.
    public static let longValue: [UInt8] = (0..<512).map { UInt8($0 % 251) }

    public let server: GATTServer
    public let client: GATTClient
    public let readHandle: UInt16
    public let notifyHandle: UInt16
    public let writeHandle: UInt16
    private let notifications = NotificationCounter()

    public static func make() async throws -> GATTPair {
        let box = ClientBox()
        let handle = connectionHandle
        let server = GATTServer(preferredMTU: 517, logger: quietLogger("bluejay.bench.gatt-server")) { _, pdu, completion in
            box.client?.receive(pdu)
            completion?(.success(()))
        }
        var settings = GATTServerSettings()
        // No controller here to drain the queue: without this, the server would refuse
        // notifications past 16 in flight until its completion tasks ran.
        settings.maximumPendingNotifications = 1 << 30
        await server.configure(settings)
        _ = try await server.addService(GATTServiceDefinition(uuid: serviceUUID, characteristics: [
            GATTCharacteristicDefinition(uuid: readUUID, properties: .read, value: readValue),
            GATTCharacteristicDefinition(uuid: notifyUUID, properties: [.read, .notify], value: [0]),
            GATTCharacteristicDefinition(uuid: writeUUID, properties: [.read, .write], value: []),
        ]))
        let client = GATTClient(logger: quietLogger("bluejay.bench.gatt")) { pdu, completion in
            server.receive(pdu, connectionHandle: handle)
            completion?(.success(()))
        }
        box.set(client)
        // Discover as an application would (setup, not measured).
        guard let service = try await client.discoverPrimaryServices(uuid: serviceUUID).first else {
            throw BenchmarkSetupError("service not found")
        }
        let characteristics = try await client.discoverCharacteristics(of: service)
        guard let read = characteristics.first(where: { $0.uuid == readUUID }),
              let notify = characteristics.first(where: { $0.uuid == notifyUUID }),
              let write = characteristics.first(where: { $0.uuid == writeUUID }) else {
            throw BenchmarkSetupError("characteristics not found")
        }
        let pair = GATTPair(server: server, client: client, read: read.valueHandle, notify: notify.valueHandle, write: write.valueHandle)
        let stream = try await client.subscribe(to: notify)
        let counter = pair.notifications
        Task {
            for try await _ in stream { counter.increment() }
        }
        return pair
    }

    private init(server: GATTServer, client: GATTClient, read: UInt16, notify: UInt16, write: UInt16) {
        self.server = server
        self.client = client
        readHandle = read
        notifyHandle = notify
        writeHandle = write
    }

    /// `count` Read Requests, one after the other; returns the octets read.
    public func reads(_ count: Int) async throws -> Int {
        var total = 0
        for _ in 0..<count { total += try await client.readValue(handle: readHandle).count }
        return total
    }

    /// `count` notifications from the server, returning once the subscriber's stream has
    /// delivered all of them.
    public func notify(_ count: Int) async throws -> Int {
        let target = notifications.count + count
        for _ in 0..<count {
            try await server.notify(Self.notifyValue, forHandle: notifyHandle, connectionHandle: Self.connectionHandle)
        }
        await notifications.wait(for: target)
        return count
    }

    /// `count` long writes of ``longValue`` (Prepare Write Requests, then Execute Write).
    public func longWrites(_ count: Int) async throws -> Int {
        for _ in 0..<count { try await client.writeLongValue(Self.longValue, handle: writeHandle) }
        return count
    }

    /// The server's value of the long-write characteristic, for the check.
    public func writtenValue() async -> [UInt8] {
        await server.value(forHandle: writeHandle) ?? []
    }

    private final class ClientBox: Sendable {
        private let reference = Mutex<GATTClient?>(nil)
        var client: GATTClient? { reference.withLock { $0 } }
        func set(_ client: GATTClient) { reference.withLock { $0 = client } }
    }
}

/// Counts values a subscriber received and wakes a waiter at a target.
final class NotificationCounter: Sendable {
    private let state = Mutex<(count: Int, target: Int, waiter: CheckedContinuation<Void, Never>?)>((0, .max, nil))

    var count: Int { state.withLock { $0.count } }

    func increment() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            guard state.count >= state.target, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait(for target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.target = target
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

public struct BenchmarkSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A logger that says only what went wrong, so that benchmark output stays clean.
func quietLogger(_ label: String) -> Logger {
    var logger = Logger(label: label)
    logger.logLevel = .warning
    return logger
}
