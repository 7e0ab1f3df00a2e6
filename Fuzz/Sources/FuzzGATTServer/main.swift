import BluetoothCore
import BluetoothHCI
import BluetoothHost
import FuzzSupport
import Synchronization

/// The ATT server: this device's ``GATTServer`` with a database of every kind of attribute
/// (read and write handlers, encrypted and long values, descriptors, an included service),
/// under random sequences of PDUs from two clients, with the application updating values and
/// adding and removing a service in between. The server answers every request exactly once,
/// with its response or an Error Response naming it, and nothing else (Core 6.0, Vol 3,
/// Part F, 3.3 and 3.4): no answer to a command, a confirmation or a PDU meant for a client;
/// every answer, notification and indication fits the connection's ATT MTU; memory stays
/// bounded (libFuzzer's `-rss_limit_mb` and `-malloc_limit_mb`, as scripts/fuzz.sh runs it).
///
/// Input: operations: a control byte (which client, or which application action) and, for a
/// client PDU, a selector (raw bytes, or a request opcode then bytes) and a chunk.

/// The request opcodes a selector can put in front of the fuzzer's bytes.
let requestOpcodes: [ATTOpcode] = [
    .exchangeMTURequest, .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readRequest, .readBlobRequest,
    .readMultipleRequest, .readByGroupTypeRequest, .writeRequest, .prepareWriteRequest, .executeWriteRequest,
    .readMultipleVariableRequest, .writeCommand, .signedWriteCommand, .handleValueConfirmation,
]
let connectionHandles: [UInt16] = [0x0040, 0x0041]

/// What the server sent, per connection, in order.
final class Outbox: Sendable {
    let streams: [UInt16: AsyncStream<[UInt8]>]
    private let continuations: [UInt16: AsyncStream<[UInt8]>.Continuation]

    init() {
        var streams: [UInt16: AsyncStream<[UInt8]>] = [:]
        var continuations: [UInt16: AsyncStream<[UInt8]>.Continuation] = [:]
        for handle in connectionHandles {
            (streams[handle], continuations[handle]) = AsyncStream.makeStream(of: [UInt8].self)
        }
        self.streams = streams
        self.continuations = continuations
    }

    func sent(_ pdu: [UInt8], on handle: UInt16) {
        guard let continuation = continuations[handle] else { fuzzFailure("the server sent \(fuzzHex(pdu)) to unknown connection \(handle)") }
        continuation.yield(pdu)
    }

    func finish() { continuations.values.forEach { $0.finish() } }
}

/// The database: every kind of attribute the server handles differently.
func publish(on server: GATTServer) async throws -> [UInt16] {
    let battery = try await server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180F)), isPrimary: false, characteristics: [
        GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A19)), properties: [.read, .notify], value: [100]),
    ]))
    let heartRate = try await server.addService(GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180D)), characteristics: [
        GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A37)), properties: [.notify], value: [0x00, 72]),
        GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A38)), properties: [.read], value: [0x01]),
    ]))
    let custom = try await server.addService(GATTServiceDefinition(
        uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E", includedServices: [BluetoothUUID(UInt16(0x180F))], characteristics: [
            GATTCharacteristicDefinition(
                uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", properties: [.read, .write, .writeWithoutResponse, .notify, .indicate],
                value: (0..<60).map { UInt8($0) }, userDescription: "Fuzzed", presentationFormat: GATTPresentationFormat(format: 0x04),
                descriptors: [GATTDescriptorDefinition(uuid: "6E400010-B5A3-F393-E0A9-E50E24DCCA9E", permissions: .readWrite, value: [1, 2])]),
            GATTCharacteristicDefinition(
                uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", properties: [.read, .write],
                onRead: { request in request.handle & 1 == 0 ? .value(Array(repeating: 7, count: 300)) : .error(.unlikelyError) },
                onWrite: { request in request.value.first == 0xEE ? .error(.valueNotAllowed) : .success }),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A3D)), properties: [.write], maximumValueLength: 20),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A3E)), properties: [.read, .write],
                                         permissions: [.readEncryptionRequired, .writeEncryptionRequired], value: [9]),
            GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A3F)), properties: [.indicate], value: []),
        ]))
    return [battery, heartRate, custom].flatMap(\.characteristics).filter { !$0.properties.isDisjoint(with: [.notify, .indicate]) }.map(\.valueHandle)
}

/// The service the application adds and removes.
let extraService = GATTServiceDefinition(uuid: BluetoothUUID(UInt16(0x180A)), characteristics: [
    GATTCharacteristicDefinition(uuid: BluetoothUUID(UInt16(0x2A29)), properties: [.read], value: Array("Bluejay".utf8)),
])

/// The checks on what one connection receives.
struct ClientLink {
    let handle: UInt16
    var pdus: AsyncStream<[UInt8]>.Iterator
    /// The largest MTU the connection had: pushed values sent before a reconnection may have used it.
    var largestMTU = Int(ATTPDU.defaultLEMTU)
    var indicationsToConfirm = 0

    /// The next PDU that is not a notification or an indication.
    mutating func nextAnswer(to request: [UInt8], mtu: Int) async -> [UInt8] {
        largestMTU = max(largestMTU, mtu)
        while true {
            guard let pdu = await pdus.next() else { fuzzFailure("the server stopped answering on \(handle)") }
            switch pdu.first {
            case ATTOpcode.handleValueNotification.rawValue?, ATTOpcode.handleValueIndication.rawValue?:
                fuzzCheck(pdu.count <= largestMTU, "a value pushed on \(handle) is \(pdu.count) bytes, MTU \(largestMTU): \(fuzzHex(pdu))")
                if pdu.first == ATTOpcode.handleValueIndication.rawValue { indicationsToConfirm += 1 }
            default:
                fuzzCheck(pdu.count <= mtu, "the answer to \(fuzzHex(request)) is \(pdu.count) bytes, MTU \(mtu): \(fuzzHex(pdu))")
                return pdu
            }
        }
    }
}

/// Whether the server must answer `pdu`: a request, decodable or not, or an unknown opcode
/// without the Command flag (Core 6.0, Vol 3, Part F, 3.3).
func expectsAnswer(_ pdu: [UInt8]) -> Bool {
    guard let first = pdu.first else { return false }
    let opcode = ATTOpcode(rawValue: first)
    return !opcode.isCommand && (opcode.kind == .request || !opcode.isKnown)
}

/// The answer names the request: its response, or an Error Response for its opcode.
func checkAnswer(_ answer: [UInt8], to request: [UInt8]) {
    guard let first = request.first else { return }
    let opcode = ATTOpcode(rawValue: first)
    let decoded: ATTPDU
    do {
        decoded = try ATTPDU.decode(answer)
    } catch {
        fuzzFailure("the server answered \(fuzzHex(request)) with undecodable \(fuzzHex(answer)): \(error)")
    }
    if case let .errorResponse(error) = decoded {
        fuzzCheck(error.requestOpcode == opcode, "the server answered \(fuzzHex(request)) with \(decoded)")
        if !opcode.isKnown { fuzzCheck(error.code == .requestNotSupported, "the unknown \(opcode) was answered \(decoded)") }
        return
    }
    fuzzCheck(opcode.isKnown && decoded.opcode == opcode.responseOpcode, "the server answered \(fuzzHex(request)) with \(decoded)")
}

func run(_ input: FuzzInput) async {
    var input = input
    let outbox = Outbox()
    let server = GATTServer(preferredMTU: 517, clock: .manual(ManualClock()), logger: fuzzLogger) { handle, pdu, completion in
        outbox.sent(pdu, on: handle)
        completion?(.success(()))
    }
    let pushHandles: [UInt16]
    do {
        pushHandles = try await publish(on: server)
    } catch {
        fuzzFailure("the database does not publish: \(error)")
    }
    var extra: GATTPublishedService?
    var connections = connectionHandles.compactMap { handle in outbox.streams[handle].map { ClientLink(handle: handle, pdus: $0.makeAsyncIterator()) } }
    var used: Set<Int> = []

    while !input.isAtEnd {
        let control = input.byte()
        let index = Int(control >> 7)
        let handle = connections[index].handle
        switch control & 0b111 {
        case 5:
            let value = input.chunk()
            _ = try? await server.updateValue(value, forHandle: pushHandles[input.index(pushHandles.count)])
        case 6:
            if let published = extra {
                try? await server.removeService(published)
                extra = nil
            } else {
                extra = try? await server.addService(extraService)
            }
        case 7:
            server.connectionDidClose(handle: handle)
            connections[index].indicationsToConfirm = 0
        default:
            let selector = input.byte()
            var pdu = input.chunk()
            if selector >= 0x40 { pdu.insert(requestOpcodes[Int(selector) % requestOpcodes.count].rawValue, at: 0) }
            if control & 0x40 != 0, connections[index].indicationsToConfirm > 0 {
                // Confirm an indication, as a client does before the next can come.
                connections[index].indicationsToConfirm -= 1
                server.receive([ATTOpcode.handleValueConfirmation.rawValue], connectionHandle: handle)
            }
            server.receive(pdu, connectionHandle: handle)
            used.insert(index)
            guard expectsAnswer(pdu) else { continue }
            let answer = await connections[index].nextAnswer(to: pdu, mtu: Int(await server.mtu(connectionHandle: handle)))
            checkAnswer(answer, to: pdu)
        }
    }
    // Nothing more came than the answers: the answer to one more request is the next PDU.
    for index in used.sorted() {
        let handle = connections[index].handle
        let probe: [UInt8] = [ATTOpcode.readRequest.rawValue, 0x01, 0x00]
        server.receive(probe, connectionHandle: handle)
        let answer = await connections[index].nextAnswer(to: probe, mtu: Int(await server.mtu(connectionHandle: handle)))
        fuzzCheck(answer.first == ATTOpcode.readResponse.rawValue, "a PDU \(fuzzHex(answer)) that answers nothing came on \(handle)")
    }
    // The connections end, and the server forgets them before it goes. (A server released while
    // it still knows a connection leaves that connection's request task waiting forever, so the
    // target waits for the state it means rather than leak a task per input.)
    for handle in connectionHandles { server.connectionDidClose(handle: handle) }
    while await !server.connectionHandles.isEmpty { await Task.yield() }
    server.close()
    outbox.finish()
}

runFuzzer { input in
    let operations = input
    fuzzAwait { await run(operations) }
}
