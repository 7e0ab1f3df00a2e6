import BluetoothCore
import BluetoothHost
import Synchronization

/// A central writes a characteristic: answer it with ``respond(_:)``, once. On success the
/// value is stored, so later reads return it. A request dropped unanswered is answered with
/// Unlikely Error; one not answered within the server's handler timeout likewise.
public final class WriteRequest: Sendable, CustomStringConvertible {
    public let central: Central
    public let characteristic: GATTPublishedCharacteristic
    /// The whole value written (a long write arrives assembled).
    public let value: [UInt8]
    /// How it arrived; a Write Command gets no answer whatever ``respond(_:)`` says.
    public let kind: GATTWriteRequest.Kind
    private let answer: WriteAnswer

    init(central: Central, characteristic: GATTPublishedCharacteristic, value: [UInt8], kind: GATTWriteRequest.Kind, answer: WriteAnswer) {
        self.central = central
        self.characteristic = characteristic
        self.value = value
        self.kind = kind
        self.answer = answer
    }

    deinit {
        answer.resume(.error(.unlikelyError))
    }

    /// Whether the central waits for the answer.
    public var needsResponse: Bool { kind != .command && kind != .signedCommand }

    /// Accepts the write (`.success`) or refuses it with an ATT error, e.g.
    /// `.error(.invalidAttributeValueLength)` or an application error 0x80…0x9F. Later
    /// calls do nothing.
    public func respond(_ response: GATTWriteResponse) {
        answer.resume(response)
    }

    /// Refuses the write with an ATT error.
    public func respond(withError code: ATTErrorCode) { respond(.error(code)) }

    public var description: String { "\(kind) of \(value.count) bytes to \(characteristic.uuid) from \(central)" }
}

/// The answer to one write, given once: by the app, by the request's end unanswered, or
/// when the server gives up on it. The first wins, whichever comes before the wait begins.
final class WriteAnswer: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<GATTWriteResponse, Never>)
        case answered(GATTWriteResponse)
        case done
    }

    private let state = Mutex(State.empty)

    /// The wait for the answer; call once.
    func set(_ continuation: CheckedContinuation<GATTWriteResponse, Never>) {
        let early = state.withLock { state -> GATTWriteResponse? in
            guard case let .answered(response) = state else {
                state = .waiting(continuation)
                return nil
            }
            state = .done
            return response
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Answers, unless answered already.
    func resume(_ response: GATTWriteResponse) {
        let continuation = state.withLock { state -> CheckedContinuation<GATTWriteResponse, Never>? in
            switch state {
            case .empty:
                state = .answered(response)
                return nil
            case let .waiting(continuation):
                state = .done
                return continuation
            case .answered, .done:
                return nil
            }
        }
        continuation?.resume(returning: response)
    }
}

/// A central reads a characteristic that has a read handler.
public struct ReadRequest: Sendable, Hashable {
    public var central: Central
    public var characteristic: GATTPublishedCharacteristic
    /// Where the central starts reading; answer the whole value, the server cuts it.
    public var offset: Int
}

/// Answers a read: `.value(bytes)` or `.error(code)`.
public typealias ReadHandler = @Sendable (ReadRequest) async -> GATTReadResponse

/// Where the GATT server's read and write handlers of published characteristics lead: the
/// application's read handlers and write-request consumers, found by value handle.
final class RequestRouter: Sendable {
    enum WriteConsumer: Sendable {
        case stream(AsyncStream<WriteRequest>.Continuation)
        case callback(@Sendable (WriteRequest) -> Void)
    }

    private struct State: Sendable {
        weak var server: GATTServer?
        var characteristics: [UInt16: GATTPublishedCharacteristic] = [:]
        var writeConsumers: [UInt16: WriteConsumer] = [:]
        var readHandlers: [UInt16: ReadHandler] = [:]
    }

    private let state = Mutex(State())
    private let dropped = Atomic<Int>(0)
    /// Names centrals by their identities once known.
    private let resolver: AddressResolver

    init(resolver: AddressResolver) {
        self.resolver = resolver
    }

    /// How many writes were refused because their stream was full.
    var droppedWriteRequests: Int { dropped.load(ordering: .relaxed) }

    /// The server whose stored values answer reads without a handler.
    func attach(_ server: GATTServer) {
        state.withLock { $0.server = server }
    }

    func publish(_ service: GATTPublishedService) {
        state.withLock { state in
            for characteristic in service.characteristics { state.characteristics[characteristic.valueHandle] = characteristic }
        }
    }

    func unpublish(_ service: GATTPublishedService) {
        let consumers = state.withLock { state -> [WriteConsumer] in
            var removed: [WriteConsumer] = []
            for handle in service.characteristics.map(\.valueHandle) {
                state.characteristics[handle] = nil
                state.readHandlers[handle] = nil
                if let consumer = state.writeConsumers.removeValue(forKey: handle) { removed.append(consumer) }
            }
            return removed
        }
        for case let .stream(continuation) in consumers { continuation.finish() }
    }

    /// Sets where writes of a characteristic go; the previous consumer's stream ends.
    func setWriteConsumer(_ consumer: WriteConsumer?, valueHandle: UInt16) {
        let previous = state.withLock { state in
            defer { state.writeConsumers[valueHandle] = consumer }
            return state.writeConsumers[valueHandle]
        }
        if case let .stream(continuation)? = previous { continuation.finish() }
    }

    func setReadHandler(_ handler: ReadHandler?, valueHandle: UInt16) {
        state.withLock { $0.readHandlers[valueHandle] = handler }
    }

    func read(_ request: GATTReadRequest) async -> GATTReadResponse {
        let (handler, characteristic, server) = state.withLock { ($0.readHandlers[request.handle], $0.characteristics[request.handle], $0.server) }
        if let handler, let characteristic {
            return await handler(ReadRequest(central: Central(connectionHandle: request.connectionHandle, overTheAir: request.peer, resolver: resolver),
                                             characteristic: characteristic, offset: request.offset))
        }
        guard let server else { return .error(.unlikelyError) }
        return .value(await server.value(forHandle: request.handle) ?? [])
    }

    func write(_ request: GATTWriteRequest) async -> GATTWriteResponse {
        let (consumer, characteristic) = state.withLock { ($0.writeConsumers[request.handle], $0.characteristics[request.handle]) }
        guard let consumer, let characteristic else { return .success }
        let central = Central(connectionHandle: request.connectionHandle, overTheAir: request.peer, resolver: resolver)
        let answer = WriteAnswer()
        // The server gives up on a handler at its timeout and cancels it: the answer is then
        // settled, so that this task ends instead of waiting for a request nobody may answer.
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                answer.set(continuation)
                let writeRequest = WriteRequest(central: central, characteristic: characteristic, value: request.value,
                                                kind: request.kind, answer: answer)
                switch consumer {
                case let .stream(stream):
                    switch stream.yield(writeRequest) {
                    case .enqueued:
                        break
                    case .dropped:
                        dropped.add(1, ordering: .relaxed)
                        writeRequest.respond(withError: .insufficientResources)
                    case .terminated:
                        writeRequest.respond(.success)
                    @unknown default:
                        writeRequest.respond(withError: .unlikelyError)
                    }
                case let .callback(callback):
                    callback(writeRequest)
                }
            }
        } onCancel: {
            answer.resume(.error(.unlikelyError))
        }
    }

    func finishAll() {
        let consumers = state.withLock { state -> [WriteConsumer] in
            defer { state.writeConsumers.removeAll() }
            return Array(state.writeConsumers.values)
        }
        for case let .stream(continuation) in consumers { continuation.finish() }
    }
}
