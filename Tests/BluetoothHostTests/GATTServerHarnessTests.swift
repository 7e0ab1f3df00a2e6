import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Synchronization
import Testing

/// Wires this device's GATT server to in-memory clients, with no controller: our own
/// `GATTClient`s, or raw bearers that send bytes and record every PDU the server answers.
/// Not a `TwoDevices`: it drives the GATT server's ATT in memory, with no host, controller or link.
final class ServerHarness: Sendable {
    let server: GATTServer
    private let state = Mutex(State())

    private struct State {
        var clients: [UInt16: GATTClient] = [:]
        var recorders: [UInt16: PDURecorder] = [:]
        /// While set, the "controller" keeps notifications instead of taking them.
        var holdsCompletions = false
        var heldCompletions: [HCIController.ACLCompletion] = []
    }

    init(settings: GATTServerSettings = GATTServerSettings(), clock: BluetoothClock = .continuous) async {
        let box = Box()
        server = GATTServer(preferredMTU: 517, clock: clock) { handle, pdu, completion in
            box.harness?.deliver(pdu, to: handle, completion: completion)
        }
        box.set(self)
        await server.configure(settings)
    }

    /// Holds back references to the harness without a cycle through the server's sender.
    private final class Box: Sendable {
        private let reference = Mutex<ServerHarness?>(nil)
        var harness: ServerHarness? { reference.withLock { $0 } }
        func set(_ harness: ServerHarness) { reference.withLock { $0 = harness } }
    }

    private func deliver(_ pdu: [UInt8], to handle: UInt16, completion: HCIController.ACLCompletion?) {
        let (client, recorder, hold) = state.withLock { ($0.clients[handle], $0.recorders[handle], $0.holdsCompletions) }
        recorder?.record(pdu)
        client?.receive(pdu)
        guard let completion else { return }
        if hold {
            state.withLock { $0.heldCompletions.append(completion) }
        } else {
            completion(.success(()))
        }
    }

    /// A GATT client on connection `handle`, talking to the server in memory.
    func connectClient(handle: UInt16 = 0x0040, peer: DeviceAddress? = nil, transactionTimeout: Duration = .seconds(30)) -> GATTClient {
        let server = server
        let client = GATTClient(transactionTimeout: transactionTimeout) { pdu, completion in
            server.receive(pdu, connectionHandle: handle, peer: peer)
            completion?(.success(()))
        }
        state.withLock { $0.clients[handle] = client }
        return client
    }

    /// A bearer that sends raw bytes and records what the server answers; `peer` is the
    /// client's address as the server hears it.
    func rawBearer(handle: UInt16 = 0x0041, peer: DeviceAddress? = nil) -> RawBearer {
        let recorder = PDURecorder()
        state.withLock { $0.recorders[handle] = recorder }
        return RawBearer(handle: handle, server: server, recorder: recorder, peer: peer)
    }

    /// Records every PDU the server sends on `handle`, also to a client.
    func recorder(for handle: UInt16) -> PDURecorder {
        state.withLock { state in
            if let existing = state.recorders[handle] { return existing }
            let recorder = PDURecorder()
            state.recorders[handle] = recorder
            return recorder
        }
    }

    /// Makes the controller stop (or resume) taking notifications off the host.
    func holdCompletions(_ hold: Bool) {
        let released = state.withLock { state -> [HCIController.ACLCompletion] in
            state.holdsCompletions = hold
            guard !hold else { return [] }
            defer { state.heldCompletions.removeAll() }
            return state.heldCompletions
        }
        released.forEach { $0(.success(())) }
    }

    func disconnect(handle: UInt16) {
        let client = state.withLock { $0.clients.removeValue(forKey: handle) }
        client?.connectionDidClose(error: .disconnected(reason: .remoteUserTerminatedConnection))
        server.connectionDidClose(handle: handle)
    }
}

/// Every PDU the server sent on one bearer, in order.
final class PDURecorder: Sendable {
    private let state = Mutex<(pdus: [[UInt8]], taken: Int)>(([], 0))

    func record(_ pdu: [UInt8]) { state.withLock { $0.pdus.append(pdu) } }

    var all: [[UInt8]] { state.withLock { $0.pdus } }

    /// The next PDU not yet taken, waiting up to `timeout`; `nil` if none comes.
    func next(timeout: Duration = .seconds(20)) async -> [UInt8]? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            let pdu = state.withLock { state -> [UInt8]? in
                guard state.taken < state.pdus.count else { return nil }
                defer { state.taken += 1 }
                return state.pdus[state.taken]
            }
            if let pdu { return pdu }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }

    /// Takes PDUs until one matches, within `timeout`.
    func next(matching predicate: ([UInt8]) -> Bool, timeout: Duration = .seconds(20)) async -> [UInt8]? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            guard let pdu = await next(timeout: deadline - ContinuousClock.now) else { return nil }
            if predicate(pdu) { return pdu }
        }
        return nil
    }
}

/// A client that speaks raw ATT to the server.
struct RawBearer: Sendable {
    let handle: UInt16
    let server: GATTServer
    let recorder: PDURecorder
    var peer: DeviceAddress?

    func send(_ bytes: [UInt8]) { server.receive(bytes, connectionHandle: handle, peer: peer) }
    func send(_ pdu: ATTPDU) { send(pdu.encode()) }

    /// Sends a PDU and returns the server's answer, decoded.
    func request(_ pdu: ATTPDU, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ATTPDU {
        try await request(pdu.encode(), sourceLocation: sourceLocation)
    }

    func request(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) async throws -> ATTPDU {
        send(bytes)
        let answer = try #require(await recorder.next(), "no answer to \(Hex.encode(bytes, separator: " "))", sourceLocation: sourceLocation)
        return try ATTPDU.decode(answer)
    }

    /// Sends a request and expects an Error Response; returns its handle and code.
    func expectError(_ pdu: ATTPDU, sourceLocation: SourceLocation = #_sourceLocation) async throws -> ATTErrorResponse {
        let answer = try await request(pdu, sourceLocation: sourceLocation)
        guard case let .errorResponse(error) = answer else {
            Issue.record("expected an Error Response, got \(answer)", sourceLocation: sourceLocation)
            throw HarnessFailure.unexpected(answer)
        }
        #expect(error.requestOpcode == pdu.opcode, sourceLocation: sourceLocation)
        return error
    }

    func exchangeMTU(_ mtu: UInt16) async throws {
        _ = try await request(.exchangeMTURequest(.init(clientRxMTU: mtu)))
    }
}

enum HarnessFailure: Error {
    case unexpected(ATTPDU)
}

/// The services most server tests publish.
enum TestDatabase {
    static let service = BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    static let short = BluetoothUUID(UInt16(0xAA01))
    static let long = BluetoothUUID(UInt16(0xAA02))
    static let writeOnly = BluetoothUUID(UInt16(0xAA03))
    static let readOnly = BluetoothUUID(UInt16(0xAA04))
    static let streaming = BluetoothUUID(UInt16(0xAA05))
    static let checked = BluetoothUUID(UInt16(0xAA06))
    static let described = BluetoothUUID(UInt16(0xAA07))
    static let battery = BluetoothUUID(UInt16(0x180F))
    static let batteryLevel = BluetoothUUID(UInt16(0x2A19))

    /// 300 octets, i % 251.
    static let longValue: [UInt8] = (0..<300).map { UInt8($0 % 251) }

    /// An application error the "checked" characteristic answers writes that are not 2 octets with.
    static let wrongLengthError = ATTErrorCode(rawValue: 0x80)

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: short, properties: [.read, .write], value: [1, 2, 3]),
            GATTCharacteristicDefinition(uuid: long, properties: [.read, .write], value: longValue),
            GATTCharacteristicDefinition(uuid: writeOnly, properties: [.write, .writeWithoutResponse], value: [0]),
            GATTCharacteristicDefinition(uuid: readOnly, properties: .read, value: [0x42]),
            GATTCharacteristicDefinition(uuid: streaming, properties: [.read, .notify, .indicate], value: [0]),
            GATTCharacteristicDefinition(uuid: checked, properties: [.read, .write], value: [0, 0], onWrite: { request in
                request.value.count == 2 ? .success : .error(wrongLengthError)
            }),
            GATTCharacteristicDefinition(uuid: described, properties: .read, value: [7], userDescription: "Counter",
                                         presentationFormat: GATTPresentationFormat(format: 0x04, unit: 0x27AD)),
        ])
    }

    static var batteryDefinition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: battery, characteristics: [
            GATTCharacteristicDefinition(uuid: batteryLevel, properties: [.read, .notify], value: [100]),
        ])
    }
}

@Suite("GATT server harness and mandatory services", .timeLimit(.minutes(1)))
struct GATTServerHarnessTests {
    @Test("A server always has the GAP and GATT services, at fixed handles")
    func mandatoryServices() async throws {
        let harness = await ServerHarness()
        let client = harness.connectClient()
        let services = try await client.discoverAllPrimaryServices()
        #expect(services.map(\.uuid) == [GATTAttributeType.gapService, GATTAttributeType.gattService])
        #expect(services.map(\.handleRange) == [0x0001...0x0005, 0x0006...0x000D])
        let gatt = try #require(services.last)
        let characteristics = try await client.discoverCharacteristics(of: gatt)
        // Service Changed, then Client Supported Features and Database Hash (robust caching,
        // Core 6.0, Vol 3, Part G, 7.2 and 7.3).
        #expect(characteristics.map(\.uuid) == [GATTAttributeType.serviceChanged, GATTAttributeType.clientSupportedFeatures,
                                                GATTAttributeType.databaseHash])
        #expect(characteristics.map(\.properties) == [.indicate, [.read, .write], .read])
        #expect(characteristics.map(\.valueHandle) == [0x0008, 0x000B, 0x000D])
        #expect(characteristics.first?.valueHandle == harness.server.serviceChangedHandle)
    }

    @Test("The device name and appearance are readable and follow the setters")
    func deviceNameAndAppearance() async throws {
        let harness = await ServerHarness()
        await harness.server.setDeviceName("Thermometer")
        await harness.server.setAppearance(0x0300)
        let client = harness.connectClient()
        #expect(try await client.readValue(handle: AttributeDatabase.deviceNameHandle) == Array("Thermometer".utf8))
        #expect(try await client.readValues(ofType: GATTAttributeType.deviceName).map(\.value) == [Array("Thermometer".utf8)])
        #expect(try await client.readValue(handle: AttributeDatabase.appearanceHandle) == [0x00, 0x03])
        #expect(await harness.server.deviceName == "Thermometer")
    }

    @Test("A device name longer than 248 octets is cut without splitting a character")
    func longDeviceName() async throws {
        let harness = await ServerHarness()
        await harness.server.setDeviceName(String(repeating: "a", count: 247) + "é")
        let name = await harness.server.deviceName
        #expect(name == String(repeating: "a", count: 247))
    }

    @Test("The Service Changed value is not readable")
    func serviceChangedNotReadable() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        let error = try await raw.expectError(.readRequest(.init(handle: AttributeDatabase.serviceChangedHandle)))
        #expect(error.code == .readNotPermitted)
        #expect(error.handle == AttributeDatabase.serviceChangedHandle)
    }
}
