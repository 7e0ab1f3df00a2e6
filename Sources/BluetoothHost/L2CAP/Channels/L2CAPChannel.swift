import BluetoothCore
import BluetoothHCI
import Synchronization

/// One LE credit-based connection-oriented channel (Core 6.0, Vol 3, Part A, 3.4 and 10.1),
/// opened with ``LEHost/openChannel(psm:on:parameters:)`` or accepted by a server of
/// ``LEHost/listen(psm:parameters:security:minimumKeySize:accept:)``. Thread-safe.
///
/// Received SDUs wait in the channel until read (``read()`` or ``sdus``); the peer gets its
/// credits back only as they are read, so a slow reader stops the sender and the buffer is
/// bounded by the credits given. ``write(_:)`` cuts an SDU into K-frames and returns once the
/// last one is handed to the controller, which happens only as the peer's credits allow.
///
/// ```swift
/// let channel = try await host.openChannel(psm: 0x0080, on: connection)
/// try await channel.write(Array("hello".utf8))
/// for try await sdu in channel.sdus { print(sdu) }
/// ```
public final class L2CAPChannel: Sendable, CustomStringConvertible {
    /// How the channel reaches the link; given by the host (or a test).
    struct IO: Sendable {
        /// Sends a K-frame (information payload) to the peer's CID.
        var sendFrame: @Sendable (_ destination: L2CAPChannelID, _ payload: [UInt8], _ completion: HCIController.ACLCompletion?) -> Void
        /// Sends a signalling command (with a fresh identifier).
        var sendSignaling: @Sendable (LESignalingCommand) -> Void
        /// The channel sent L2CAP_DISCONNECTION_REQ: its CID stays reserved until the peer's
        /// response, or until the host gives up waiting (the RTX bound, Vol 3, Part A, 6.2.1).
        var disconnecting: @Sendable (L2CAPChannel) -> Void = { _ in }
    }

    /// The Simplified Protocol/Service Multiplexer the channel was opened to.
    public let psm: UInt16
    /// The connection the channel runs on.
    public let connectionHandle: UInt16
    /// The peer's address over the air.
    public let peer: DeviceAddress
    /// This side's CID.
    public let localCID: L2CAPChannelID
    /// Whether it was opened with L2CAP_CREDIT_BASED_CONNECTION_REQ (enhanced).
    public let isEnhanced: Bool
    private let io: IO

    private struct State {
        var flow: CreditBasedFlowControl
        var remoteCID: L2CAPChannelID = .null
        var closure: L2CAPChannelError?
        var readers: [UInt64: CheckedContinuation<Result<[UInt8], L2CAPChannelError>, Never>] = [:]
        var readerOrder: [UInt64] = []
        var writes: [UInt64: CheckedContinuation<Result<Void, L2CAPChannelError>, Never>] = [:]
        var nextID: UInt64 = 0
        var isPumping = false
        var pumpAgain = false
        var deliveryScheduled = false
    }

    private let state: Mutex<State>

    init(psm: UInt16, connectionHandle: UInt16, peer: DeviceAddress, localCID: L2CAPChannelID, parameters: L2CAPChannelParameters,
         isEnhanced: Bool = false, io: IO) {
        self.psm = psm
        self.connectionHandle = connectionHandle
        self.peer = peer
        self.localCID = localCID
        self.isEnhanced = isEnhanced
        self.io = io
        state = Mutex(State(flow: CreditBasedFlowControl(
            mtu: Int(parameters.mtu), mps: Int(parameters.mps), initialCredits: Int(parameters.initialCredits))))
    }

    /// The peer's CID (``L2CAPChannelID/null`` until the peer accepted).
    public var remoteCID: L2CAPChannelID { state.withLock { $0.remoteCID } }
    /// The largest SDU this side receives.
    public var mtu: Int { state.withLock { $0.flow.mtu } }
    /// The largest SDU the peer receives (the most ``write(_:)`` takes).
    public var peerMTU: Int { state.withLock { $0.flow.peerMTU } }
    /// The largest K-frame payload the peer receives.
    public var peerMPS: Int { state.withLock { $0.flow.peerMPS } }
    /// Credits this side holds: K-frames it may send before the peer gives more.
    public var sendCredits: Int { state.withLock { $0.flow.sendCredits } }
    /// What the channel moved so far (queued SDUs count as sent).
    public var statistics: L2CAPChannelStatistics { state.withLock { $0.flow.statistics } }
    /// SDUs received and not yet read.
    public var unreadSDUCount: Int { state.withLock { $0.flow.receivedCount } }
    /// Why the channel closed, once it has.
    public var closure: L2CAPChannelError? { state.withLock { $0.closure } }
    public var isOpen: Bool { closure == nil }

    public var description: String {
        "L2CAP channel PSM \(Hex.format(psm)) \(localCID)→\(remoteCID) on connection \(Hex.format(connectionHandle))"
    }

    // MARK: Set up by the host

    /// The peer accepted (or asked for) the channel with these values.
    func connect(remoteCID: L2CAPChannelID, peerMTU: Int, peerMPS: Int, credits: Int) {
        state.withLock { state in
            state.remoteCID = remoteCID
            state.flow.connect(peerMTU: peerMTU, peerMPS: peerMPS, credits: credits)
        }
    }

    /// The peer reconfigured its MTU and MPS (enhanced channels).
    func reconfigure(peerMTU: Int, peerMPS: Int) {
        state.withLock { $0.flow.reconfigure(peerMTU: peerMTU, peerMPS: peerMPS) }
    }

    // MARK: Receiving (the transport's reader thread)

    /// Takes one K-frame. Returns whether the channel should be handed to ``deliver()`` after
    /// the batch (an SDU completed while a reader waits, and no delivery is scheduled yet).
    /// A frame that breaks flow control disconnects the channel (Core 6.0, Vol 3, Part A, 10.1).
    func receive(_ payload: ArraySlice<UInt8>) -> Bool {
        let outcome = state.withLock { state -> Result<Bool, L2CAPChannelError> in
            // After this side closed, data is discarded until the peer answers (Vol 3, Part A, 4.6).
            guard state.closure == nil else { return .success(false) }
            do throws(L2CAPChannelError) {
                let completed = try state.flow.receive(payload)
                // Credits freed by a peer that cut an SDU finer than its credits allow.
                guard completed, !state.readers.isEmpty, !state.deliveryScheduled else { return .success(false) }
                state.deliveryScheduled = true
                return .success(true)
            } catch {
                return .failure(error)
            }
        }
        switch outcome {
        case let .success(schedule):
            if !schedule { giveCreditsIfDue() }
            return schedule
        case let .failure(error):
            disconnect(with: error)
            return false
        }
    }

    /// Hands waiting readers the SDUs received in this batch: one wake-up per reader per batch.
    func deliver() {
        var handed: [(CheckedContinuation<Result<[UInt8], L2CAPChannelError>, Never>, [UInt8])] = []
        state.withLock { state in
            state.deliveryScheduled = false
            while let id = state.readerOrder.first, let reader = state.readers[id], let sdu = state.flow.takeSDU() {
                state.readerOrder.removeFirst()
                state.readers[id] = nil
                handed.append((reader, sdu))
            }
        }
        for (reader, sdu) in handed { reader.resume(returning: .success(sdu)) }
        giveCreditsIfDue()
    }

    // MARK: Reading

    /// The next SDU received. Waits for one; throws once the channel has closed and every SDU
    /// received before is read (``L2CAPChannelError/closedByPeer`` and
    /// ``L2CAPChannelError/closedLocally`` for orderly closes), or ``L2CAPChannelError/host(_:)``
    /// with ``HostError/cancelled`` when the waiting task is cancelled.
    public func read() async throws(L2CAPChannelError) -> [UInt8] {
        if let sdu = try takeIfReady() {
            giveCreditsIfDue()
            return sdu
        }
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<[UInt8], L2CAPChannelError>, Never>) in
                let now = state.withLock { state -> Result<[UInt8], L2CAPChannelError>? in
                    if let sdu = state.flow.takeSDU() { return .success(sdu) }
                    if let closure = state.closure { return .failure(closure) }
                    if Task.isCancelled { return .failure(.host(.cancelled)) }
                    state.readers[id] = continuation
                    state.readerOrder.append(id)
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let reader = state.withLock { state in
                state.readerOrder.removeAll { $0 == id }
                return state.readers.removeValue(forKey: id)
            }
            reader?.resume(returning: .failure(.host(.cancelled)))
        }
        giveCreditsIfDue()
        return try result.get()
    }

    private func takeIfReady() throws(L2CAPChannelError) -> [UInt8]? {
        let result = state.withLock { state -> Result<[UInt8]?, L2CAPChannelError> in
            if let sdu = state.flow.takeSDU() { return .success(sdu) }
            if let closure = state.closure { return .failure(closure) }
            return .success(nil)
        }
        return try result.get()
    }

    /// Sends a Flow Control Credit Indication when the reader freed enough credits.
    private func giveCreditsIfDue() {
        let grant = state.withLock { state -> (L2CAPChannelID, UInt16)? in
            guard state.closure == nil, state.remoteCID != .null, let credits = state.flow.creditsToGive() else { return nil }
            return (localCID, credits)
        }
        // The CID is the sender's own (Core 6.0, Vol 3, Part A, 4.24).
        if let (cid, credits) = grant { io.sendSignaling(.flowControlCreditIndication(.init(cid: cid, credits: credits))) }
    }

    /// The SDUs received, in order, until the channel closes: the sequence ends when either
    /// side closed the channel and throws when it failed (link lost, protocol violation).
    public var sdus: SDUs { SDUs(channel: self) }

    /// The received SDUs as an `AsyncSequence` (see ``sdus``).
    public struct SDUs: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        public typealias Failure = L2CAPChannelError
        let channel: L2CAPChannel

        public struct AsyncIterator: AsyncIteratorProtocol {
            let channel: L2CAPChannel

            public mutating func next(isolation actor: isolated (any Actor)?) async throws(L2CAPChannelError) -> [UInt8]? {
                do {
                    return try await channel.read()
                } catch where error.isOrderlyClose {
                    return nil
                }
            }

            public mutating func next() async throws(L2CAPChannelError) -> [UInt8]? {
                try await next(isolation: nil)
            }
        }

        public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(channel: channel) }
    }

    // MARK: Writing

    /// Sends one SDU (at most ``peerMTU`` bytes) and returns once its last K-frame is handed to
    /// the controller, which waits for the peer's credits. SDUs go out in call order. Throws
    /// ``L2CAPChannelError/sduTooLong(length:mtu:)`` before sending anything, or the channel's
    /// closure. Cancelling the caller does not take back an SDU already queued.
    public func write(_ sdu: [UInt8]) async throws(L2CAPChannelError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, L2CAPChannelError>, Never>) in
            let failure = state.withLock { state -> L2CAPChannelError? in
                if let closure = state.closure { return closure }
                state.nextID &+= 1
                do throws(L2CAPChannelError) {
                    try state.flow.enqueue(sdu, write: state.nextID)
                } catch {
                    return error
                }
                state.writes[state.nextID] = continuation
                return nil
            }
            if let failure { continuation.resume(returning: .failure(failure)) } else { pump() }
        }
        try result.get()
    }

    /// Sends what the peer's credits allow; one caller at a time sends, in queue order.
    func pump() {
        var batch = state.withLock { state -> (L2CAPChannelID, [CreditBasedFlowControl.OutgoingFrame])? in
            if state.isPumping {
                state.pumpAgain = true
                return nil
            }
            state.isPumping = true
            return (state.remoteCID, state.closure == nil ? state.flow.takeSendableFrames() : [])
        }
        while let (destination, frames) = batch {
            for frame in frames {
                var completion: HCIController.ACLCompletion?
                if let write = frame.write {
                    completion = { [weak self] result in self?.didSend(write, result) }
                }
                io.sendFrame(destination, frame.payload, completion)
            }
            batch = state.withLock { state in
                guard state.pumpAgain, state.closure == nil else {
                    state.isPumping = false
                    state.pumpAgain = false
                    return nil
                }
                state.pumpAgain = false
                return (state.remoteCID, state.flow.takeSendableFrames())
            }
        }
    }

    private func didSend(_ write: UInt64, _ result: Result<Void, HCIError>) {
        let (writer, closure) = state.withLock { ($0.writes.removeValue(forKey: write), $0.closure) }
        switch result {
        case .success: writer?.resume(returning: .success(()))
        case let .failure(error): writer?.resume(returning: .failure(closure ?? .host(HostError.wrap(error))))
        }
    }

    /// The peer gave credits (Flow Control Credit Indication). Past 65535 the channel is
    /// disconnected (Core 6.0, Vol 3, Part A, 4.24).
    func addCredits(_ credits: UInt16) {
        let result = state.withLock { state -> Result<Void, L2CAPChannelError> in
            do throws(L2CAPChannelError) {
                try state.flow.addSendCredits(credits)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case .success:
            pump()
        case let .failure(error):
            disconnect(with: error)
        }
    }

    // MARK: Closing

    /// Closes the channel: sends L2CAP_DISCONNECTION_REQ, fails waiting reads and SDUs not yet
    /// handed to the controller with ``L2CAPChannelError/closedLocally``. Does nothing once closed.
    public func close() {
        disconnect(with: .closedLocally)
    }

    /// Closes with `error` and asks the peer to disconnect the channel.
    func disconnect(with error: L2CAPChannelError) {
        guard let remote = finish(with: error), remote != .null else { return }
        requestDisconnection(of: remote)
    }

    /// Sends L2CAP_DISCONNECTION_REQ for the peer's `remote` CID; the channel is closed already.
    func requestDisconnection(of remote: L2CAPChannelID) {
        io.sendSignaling(.disconnectionRequest(.init(destinationCID: remote, sourceCID: localCID)))
        io.disconnecting(self)
    }

    /// Ends the channel without signalling (the peer closed it, or the link is gone). Returns
    /// the peer's CID if this call closed it.
    @discardableResult
    func finish(with error: L2CAPChannelError) -> L2CAPChannelID? {
        let (readers, writes, remote) = state.withLock { state -> ([CheckedContinuation<Result<[UInt8], L2CAPChannelError>, Never>],
                                                                  [CheckedContinuation<Result<Void, L2CAPChannelError>, Never>],
                                                                  L2CAPChannelID?) in
            guard state.closure == nil else { return ([], [], nil) }
            state.closure = error
            let dropped = state.flow.dropOutgoing()
            let writes = dropped.compactMap { state.writes.removeValue(forKey: $0) }
            // SDUs already received stay readable after an orderly close; waiting readers
            // have none left to take.
            defer {
                state.readers.removeAll()
                state.readerOrder.removeAll()
            }
            let readers = state.readerOrder.compactMap { state.readers[$0] }
            return (readers, writes, state.remoteCID)
        }
        readers.forEach { $0.resume(returning: .failure(error)) }
        writes.forEach { $0.resume(returning: .failure(error)) }
        return remote
    }
}
