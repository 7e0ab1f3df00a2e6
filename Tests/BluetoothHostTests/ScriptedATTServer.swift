import BluetoothCore
import BluetoothHCI
import Synchronization
@testable import BluetoothHost

/// A fake ATT server for driving a ``GATTClient`` without a controller: it receives what the
/// client sends through its `send` closure, answers from a small attribute database (as a
/// GATT server would, a few entries per response so that the client has to page), and lets
/// each test override any answer, hold it back, or push notifications and indications.
final class ScriptedATTServer: Sendable {
    /// What the server does with one request.
    enum Reply: Sendable {
        /// Answer from the database.
        case standard
        /// Answer with this PDU.
        case pdu(ATTPDU)
        /// Answer with these bytes (which may be malformed).
        case bytes([UInt8])
        /// Say nothing (the test may answer later with ``push(_:)``).
        case silence
    }

    typealias Script = @Sendable (ATTPDU) -> Reply

    private struct State {
        weak var client: GATTClient?
        var database: FakeAttributeDatabase
        var script: Script = { _ in .standard }
        var holdsCompletions = false
        var heldCompletions: [HCIController.ACLCompletion] = []
    }

    /// Every PDU the client sent, in order.
    let sent = AwaitableLog<[UInt8]>()
    /// One entry each time the client asked to drop the link.
    let linkCloses = AwaitableLog<Void>()
    private let state: Mutex<State>

    init(database: FakeAttributeDatabase) {
        state = Mutex(State(database: database))
    }

    /// A client wired to a new server.
    static func connect(database: FakeAttributeDatabase = FakeAttributeDatabase(),
                        transactionTimeout: Duration = .seconds(30), clock: BluetoothClock = .continuous) -> (GATTClient, ScriptedATTServer) {
        let server = ScriptedATTServer(database: database)
        let client = GATTClient(transactionTimeout: transactionTimeout, clock: clock, send: { pdu, completion in
            server.clientSent(pdu, completion: completion)
        }, closeLink: {
            server.linkCloses.append(())
        })
        server.state.withLock { $0.client = client }
        return (client, server)
    }

    /// Replaces how requests are answered.
    func script(_ script: @escaping Script) {
        state.withLock { $0.script = script }
    }

    var database: FakeAttributeDatabase { state.withLock { $0.database } }

    /// While held, the "controller" does not report that it took the client's PDUs.
    func holdCompletions() { state.withLock { $0.holdsCompletions = true } }

    /// Reports every held PDU as taken (or failed).
    func releaseCompletions(with result: Result<Void, HCIError> = .success(())) {
        let held = state.withLock { state -> [HCIController.ACLCompletion] in
            state.holdsCompletions = false
            defer { state.heldCompletions = [] }
            return state.heldCompletions
        }
        held.forEach { $0(result) }
    }

    /// Sends a PDU to the client: a notification, an indication or a late response.
    func push(_ pdu: ATTPDU) { push(pdu.encode()) }

    func push(_ bytes: [UInt8]) {
        state.withLock { $0.client }?.receive(bytes)
    }

    /// The PDUs the client sent, decoded (undecodable ones left out).
    var requests: [ATTPDU] { sent.items.compactMap { try? ATTPDU.decode($0) } }

    /// Waits until the client has sent `count` PDUs that satisfy `predicate`.
    func waitForSent(count: Int = 1, timeout: Duration = .seconds(20), where predicate: @escaping @Sendable (ATTPDU) -> Bool) async -> [ATTPDU]? {
        await sent.wait(timeout: timeout) { items in
            items.compactMap { try? ATTPDU.decode($0) }.filter(predicate).count >= count
        }?.compactMap { try? ATTPDU.decode($0) }
    }

    private func clientSent(_ bytes: [UInt8], completion: HCIController.ACLCompletion?) {
        sent.append(bytes)
        let (answer, client, holdCompletion) = state.withLock { state -> ([UInt8]?, GATTClient?, Bool) in
            let hold = state.holdsCompletions && completion != nil
            if hold, let completion { state.heldCompletions.append(completion) }
            guard let request = try? ATTPDU.decode(bytes), request.expectedResponseOpcode != nil else { return (nil, state.client, hold) }
            switch state.script(request) {
            case .standard: return (state.database.answer(request).encode(), state.client, hold)
            case let .pdu(pdu): return (pdu.encode(), state.client, hold)
            case let .bytes(bytes): return (bytes, state.client, hold)
            case .silence: return (nil, state.client, hold)
            }
        }
        if !holdCompletion { completion?(.success(())) }
        if let answer { client?.receive(answer) }
    }
}

/// The attributes of a fake server and how a GATT server answers requests about them
/// (Core 6.0, Vol 3, Part F, 3.4 and Part G, 4), with at most ``entriesPerResponse``
/// entries per response.
struct FakeAttributeDatabase: Sendable {
    struct Attribute: Sendable {
        var handle: UInt16
        var type: BluetoothUUID
        var value: [UInt8]
        /// The last handle of a service's group.
        var groupEnd: UInt16?
    }

    var attributes: [Attribute] = []
    var entriesPerResponse = 2
    var serverMTU: UInt16 = 517
    var mtu: UInt16 = ATTPDU.defaultLEMTU
    private var prepared: [(handle: UInt16, offset: UInt16, value: [UInt8])] = []

    init(entriesPerResponse: Int = 2) { self.entriesPerResponse = entriesPerResponse }

    // MARK: Building

    mutating func add(_ handle: UInt16, _ type: BluetoothUUID, _ value: [UInt8], groupEnd: UInt16? = nil) {
        attributes.append(Attribute(handle: handle, type: type, value: value, groupEnd: groupEnd))
        attributes.sort { $0.handle < $1.handle }
    }

    mutating func service(_ range: ClosedRange<UInt16>, _ uuid: BluetoothUUID, primary: Bool = true) {
        let type = primary ? GATTAttributeType.primaryService : GATTAttributeType.secondaryService
        add(range.lowerBound, type, uuid.attBytes.count == 2 ? uuid.attBytes : uuid.littleEndianBytes128, groupEnd: range.upperBound)
    }

    /// A characteristic declaration at `handle`, its value at `handle + 1`.
    mutating func characteristic(_ handle: UInt16, _ uuid: BluetoothUUID, _ properties: CharacteristicProperties, value: [UInt8] = []) {
        var declaration: [UInt8] = [properties.rawValue, UInt8(truncatingIfNeeded: handle + 1), UInt8((handle + 1) >> 8)]
        declaration += uuid.attBytes.count == 2 ? uuid.attBytes : uuid.littleEndianBytes128
        add(handle, GATTAttributeType.characteristic, declaration)
        add(handle + 1, uuid, value)
    }

    mutating func descriptor(_ handle: UInt16, _ uuid: BluetoothUUID, _ value: [UInt8] = [0, 0]) {
        add(handle, uuid, value)
    }

    /// An include declaration; the service's UUID is in it only when it is a 16-bit one.
    mutating func include(_ handle: UInt16, _ range: ClosedRange<UInt16>, _ uuid: BluetoothUUID) {
        var value: [UInt8] = [UInt8(truncatingIfNeeded: range.lowerBound), UInt8(range.lowerBound >> 8),
                              UInt8(truncatingIfNeeded: range.upperBound), UInt8(range.upperBound >> 8)]
        if uuid.uint16 != nil { value += uuid.attBytes }
        add(handle, GATTAttributeType.include, value)
    }

    func value(at handle: UInt16) -> [UInt8]? { attributes.first { $0.handle == handle }?.value }

    // MARK: Answering

    mutating func answer(_ request: ATTPDU) -> ATTPDU {
        func error(_ code: ATTErrorCode, _ handle: UInt16) -> ATTPDU {
            .errorResponse(.init(requestOpcode: request.opcode, handle: handle, code: code))
        }
        func inRange(_ start: UInt16, _ end: UInt16) -> [Attribute] {
            attributes.filter { $0.handle >= start && $0.handle <= end }
        }
        /// Entries of the first one's length only (Vol 3, Part F, 3.4.4.2), a few at a time.
        func page(_ found: [Attribute], valueLength: (Attribute) -> Int) -> [Attribute] {
            guard let first = found.first else { return [] }
            return Array(found.prefix { valueLength($0) == valueLength(first) }.prefix(entriesPerResponse))
        }
        switch request {
        case let .exchangeMTURequest(exchange):
            mtu = max(ATTPDU.defaultLEMTU, min(exchange.clientRxMTU, serverMTU))
            return .exchangeMTUResponse(.init(serverRxMTU: serverMTU))
        case let .readByGroupTypeRequest(read):
            let found = page(inRange(read.startingHandle, read.endingHandle).filter { $0.type == read.attributeGroupType }) { $0.value.count }
            guard let response = ATTReadByGroupTypeResponse(entries: found.map {
                .init(handle: $0.handle, endGroupHandle: $0.groupEnd ?? $0.handle, value: $0.value)
            }) else { return error(.attributeNotFound, read.startingHandle) }
            return .readByGroupTypeResponse(response)
        case let .findByTypeValueRequest(find):
            let found = inRange(find.startingHandle, find.endingHandle)
                .filter { $0.type == BluetoothUUID(find.attributeType) && $0.value == find.attributeValue }
                .prefix(entriesPerResponse)
            guard !found.isEmpty else { return error(.attributeNotFound, find.startingHandle) }
            return .findByTypeValueResponse(.init(handlesInformation: found.map {
                .init(foundAttributeHandle: $0.handle, groupEndHandle: $0.groupEnd ?? $0.handle)
            }))
        case let .readByTypeRequest(read):
            let found = page(inRange(read.startingHandle, read.endingHandle).filter { $0.type == read.attributeType }) { $0.value.count }
            guard let response = ATTReadByTypeResponse(entries: found.map { .init(handle: $0.handle, value: $0.value) }) else {
                return error(.attributeNotFound, read.startingHandle)
            }
            return .readByTypeResponse(response)
        case let .findInformationRequest(find):
            let found = page(inRange(find.startingHandle, find.endingHandle)) { $0.type.uint16 != nil ? 2 : 16 }
            guard !found.isEmpty else { return error(.attributeNotFound, find.startingHandle) }
            return .findInformationResponse(.init(entries: found.map { .init(handle: $0.handle, type: $0.type) }))
        case let .readRequest(read):
            guard let value = value(at: read.handle) else { return error(.invalidHandle, read.handle) }
            return .readResponse(.init(value: Array(value.prefix(Int(mtu) - 1))))
        case let .readBlobRequest(read):
            guard let value = value(at: read.handle) else { return error(.invalidHandle, read.handle) }
            guard Int(read.offset) <= value.count else { return error(.invalidOffset, read.handle) }
            return .readBlobResponse(.init(partValue: Array(value.dropFirst(Int(read.offset)).prefix(Int(mtu) - 1))))
        case let .writeRequest(write):
            guard let index = attributes.firstIndex(where: { $0.handle == write.handle }) else { return error(.invalidHandle, write.handle) }
            attributes[index].value = write.value
            return .writeResponse(.init())
        case let .prepareWriteRequest(prepare):
            prepared.append((prepare.handle, prepare.offset, prepare.partValue))
            return .prepareWriteResponse(.init(handle: prepare.handle, offset: prepare.offset, partValue: prepare.partValue))
        case let .executeWriteRequest(execute):
            defer { prepared = [] }
            if execute.flags == .write {
                for part in prepared {
                    guard let index = attributes.firstIndex(where: { $0.handle == part.handle }) else { continue }
                    var value = attributes[index].value
                    if value.count < Int(part.offset) + part.value.count {
                        value += [UInt8](repeating: 0, count: Int(part.offset) + part.value.count - value.count)
                    }
                    value.replaceSubrange(Int(part.offset)..<(Int(part.offset) + part.value.count), with: part.value)
                    if Int(part.offset) == 0 { value = Array(value.prefix(part.value.count)) }
                    attributes[index].value = value
                }
            }
            return .executeWriteResponse(.init())
        default:
            return error(.requestNotSupported, 0)
        }
    }
}

/// What a consumer of a stream saw.
enum StreamEvent<Element: Sendable>: Sendable {
    case element(Element)
    case finished
    case failed(any Error)

    var element: Element? {
        if case let .element(element) = self { return element }
        return nil
    }

    var error: (any Error)? {
        if case let .failed(error) = self { return error }
        return nil
    }

    var isEnd: Bool {
        if case .element = self { return false }
        return true
    }
}

/// A stream's elements, collected by a task, for tests to wait on.
func collect<Element: Sendable>(_ stream: ValueStream<Element>) -> (AwaitableLog<StreamEvent<Element>>, Task<Void, Never>) {
    let log = AwaitableLog<StreamEvent<Element>>()
    let task = Task {
        do {
            for try await element in stream { log.append(.element(element)) }
            log.append(.finished)
        } catch {
            log.append(.failed(error))
        }
    }
    return (log, task)
}

func collect<Element: Sendable>(_ stream: AsyncStream<Element>) -> (AwaitableLog<StreamEvent<Element>>, Task<Void, Never>) {
    let log = AwaitableLog<StreamEvent<Element>>()
    let task = Task {
        for await element in stream { log.append(.element(element)) }
        log.append(.finished)
    }
    return (log, task)
}
