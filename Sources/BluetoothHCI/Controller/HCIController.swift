import BluetoothCore
import BluetoothTransport
import Dispatch
import Logging
import Synchronization

/// The controller as the host sees it over HCI: sends commands under command flow control,
/// sends L2CAP PDUs as ACL fragments under the controller's buffer credits, reassembles
/// incoming ACL data, and hands everything else to the host in the order the controller sent
/// it: to a receiver called on the transport's reader thread, one batch per transport read
/// (``start(receiver:)``), or through ``inbound`` (``start()``).
///
/// Thread-safe. Incoming packets are processed on the transport's reader thread, a whole
/// batch under one lock; outgoing packets are written in the order they were submitted.
///
/// **Receive coalescing.** A reader thread that is woken for every packet pays a wake-up per
/// notification when a peer streams them. So after a batch that held only data the peer
/// pushes unasked (the receiver says so: ``HCIBatchContent/unsolicitedDataOnly``), only
/// while such data comes faster than the window (the previous batch of it arrived less than
/// ``coalescingWindow`` before, or this one held several values: `CoalescingPace`), and
/// only while the host awaits nothing (no command pending, no ACL data waiting for credits,
/// nothing sent since the batch began), the reader pauses for up to ``coalescingWindow``
/// before it reads again, so that what arrives meanwhile comes as one batch, as interrupt
/// moderation does for a network card. Any send ends the pause at once, so an answer the host
/// is about to wait for is never held back; a packet after a quiet spell is handled at once,
/// and a slow stream (a value every few milliseconds) costs no pause at all.
public final class HCIController: Sendable {
    public typealias ACLCompletion = @Sendable (Result<Void, HCIError>) -> Void

    /// The answer to a command, before it is decoded for its type.
    enum CommandAnswer: Sendable {
        case complete(returnParameters: [UInt8])
        case status(HCIStatus)
    }

    private struct PendingCommand: Sendable {
        var continuation: CheckedContinuation<CommandAnswer, any Error>
        var timer: Task<Void, Never>?
    }

    private struct State: Sendable {
        var commands: CommandFlowControl<UInt64>
        var pendingCommands: [UInt64: PendingCommand] = [:]
        var nextCommandID: UInt64 = 0
        var acl: ACLFlowControl<ACLCompletion>
        var aclDataLength = 27
        var reassembler = ACLReassembler()
        var isClosed = false
        var closeReason: TransportError?
        /// Commands and ACL packets submitted so far: a send during a batch rules out a pause.
        var sendCount: UInt64 = 0
        /// The reader thread is in its coalescing pause; a send must wake it.
        var isPaused = false
        /// Whether pushed data comes fast enough to pause for.
        var pace: CoalescingPace
        /// Handles the controller reported disconnected and has not reused since: data for them
        /// is refused, since a packet queued for a dead link would hold a buffer credit that
        /// never comes back (the controller flushed the link, Core 6.0, Vol 4, Part E, 7.7.5).
        /// At most 0x0F00 entries (handles are 12 bits and 0x0F00 upwards is reserved).
        var closedHandles: Set<UInt16> = []
        /// Packets released by flow control, to write in this order once the lock is released.
        var outbox: [Outgoing] = []
        /// A thread is writing the outbox; others leave their packets to it.
        var isWriting = false
        /// The callers of ``waitUntilDelivered(connectionHandle:)``, by link and caller, each
        /// with the count of the link's fragments that must have completed.
        var deliveryWaiters: [UInt16: [UInt64: DeliveryWaiter]] = [:]
        var nextDeliveryWaiterID: UInt64 = 0

        /// Takes the waiters of `handle` whose fragments have all completed (or, `force`, all).
        mutating func takeDeliveryWaiters(_ handle: UInt16, force: Bool = false) -> [CheckedContinuation<Void, Never>] {
            guard var waiters = deliveryWaiters[handle] else { return [] }
            let completed = acl.progress(connectionHandle: handle).completed
            let done = waiters.filter { force || $0.value.target <= completed }
            for id in done.keys { waiters[id] = nil }
            deliveryWaiters[handle] = waiters.isEmpty ? nil : waiters
            return done.values.map(\.continuation)
        }
    }

    private struct DeliveryWaiter: Sendable {
        var target: UInt64
        var continuation: CheckedContinuation<Void, Never>
    }

    /// A packet on its way to the transport, and what to do once it is written (or not).
    private enum Outgoing: Sendable {
        case command(id: UInt64, opcode: HCIOpcode, packet: [UInt8])
        case acl(packet: [UInt8], completion: ACLCompletion?)
    }

    public let transport: any HCITransport
    /// Events and L2CAP PDUs for the host, in controller order; ends with `.transportClosed`.
    public let inbound: AsyncStream<HCIInbound>
    private let inboundContinuation: AsyncStream<HCIInbound>.Continuation
    private let state: Mutex<State>
    private let logger: Logger
    /// How long a command may wait for its Command Complete or Command Status.
    public let commandTimeout: Duration
    /// The clock of the command timeouts.
    public let clock: BluetoothClock
    /// The longest receive-coalescing pause (see the type's documentation); zero turns it off.
    public let coalescingWindow: Duration
    /// The bounds on what the controller keeps for later.
    public let limits: HCILimits
    /// Items ``inbound`` dropped because its consumer did not keep up (``HCILimits/inboundItems``).
    private let droppedInbound = Atomic<Int>(0)
    /// Where the reader thread waits out a coalescing pause; a send signals it.
    private let pauseEnd = DispatchSemaphore(value: 0)
    /// The batches the reader thread began and handed to its receiver, for
    /// ``waitForReceivedBatches()``.
    private let delivery = Mutex(DeliveryProgress())

    private struct DeliveryProgress: Sendable {
        var begun: UInt64 = 0
        var delivered: UInt64 = 0
        var isClosed = false
        var waiters: [(batch: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
    }

    public init(transport: any HCITransport, commandTimeout: Duration = .seconds(5), clock: BluetoothClock = .continuous,
                coalescingWindow: Duration = .zero, limits: HCILimits = HCILimits(), logger: Logger = Logger(label: "bluejay.hci")) {
        self.transport = transport
        self.commandTimeout = commandTimeout
        self.clock = clock
        self.coalescingWindow = coalescingWindow
        self.limits = limits
        self.logger = logger
        state = Mutex(State(commands: CommandFlowControl(ghostLifetime: commandTimeout, waitingLimit: limits.waitingCommands),
                            acl: ACLFlowControl(queuedByteLimit: limits.aclQueuedBytesPerConnection),
                            pace: CoalescingPace(window: coalescingWindow)))
        (inbound, inboundContinuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingOldest(max(1, limits.inboundItems)))
    }

    /// Items ``inbound`` dropped so far because its consumer did not keep up.
    public var droppedInboundCount: Int { droppedInbound.load(ordering: .relaxed) }

    /// PDUs refused so far because their connection's send queue was full.
    public var refusedACLCount: Int { state.withLock { $0.acl.refusedCount } }

    /// Starts receiving from the transport; what the host gets goes to ``inbound``. Call once,
    /// before sending anything.
    public func start() {
        let continuation = inboundContinuation
        start { [self] batch in
            for item in batch {
                if case .dropped = continuation.yield(item) {
                    if droppedInbound.add(1, ordering: .relaxed).newValue == 1 {
                        logger.warning("the inbound stream's consumer does not keep up: dropping what passes its limit")
                    }
                }
                if case .transportClosed = item { continuation.finish() }
            }
            return .other
        }
    }

    /// Starts receiving from the transport: `receiver` gets what the host gets, on the
    /// transport's reader thread, one batch per transport read, in controller order; the last
    /// batch ends with `.transportClosed`. It runs synchronously: the host routes the batch
    /// and hands the app one delivery for it, then says what the batch held (for receive
    /// coalescing). Call once, before sending anything.
    public func start(receiver: @escaping @Sendable ([HCIInbound]) -> HCIBatchContent) {
        transport.start { [self] event in receive(event, receiver: receiver) }
    }

    /// Closes the transport; pending operations fail with ``HCIError/transportClosed(_:)``.
    public func close() {
        state.withLock { endPause(&$0) }
        transport.close()
    }

    public var isClosed: Bool { state.withLock { $0.isClosed } }

    // MARK: Commands

    /// Sends a command and returns its decoded return parameters. For commands acknowledged
    /// by Command Status, returns once the controller has accepted the command.
    ///
    /// Throws ``HCIError``: `.commandFailed` for a non-zero status, `.commandTimeout`,
    /// `.transportClosed`, `.malformedResponse`, `.cancelled`.
    public func send<Command: HCICommand>(_ command: Command, timeout: Duration? = nil) async throws -> Command.ReturnParameters {
        logger.trace("command \(Command.name)", metadata: ["command": "\(command)"])
        let packet = command.encode()
        // The connection it acts on, when the answer names it too: its first parameter.
        let handle = Command.ReturnParameters.leadsWithConnectionHandle ? ByteReader.uint16(in: packet[...], at: 3).map { $0 & 0x0FFF } : nil
        let answer = try await execute(opcode: Command.opcode, packet: packet, connectionHandle: handle, timeout: timeout ?? commandTimeout)
        switch answer {
        case let .complete(returnParameters):
            guard let statusByte = returnParameters.first else {
                throw HCIError.malformedResponse(Command.opcode, .truncated(context: "\(Command.name) return parameters", needed: 1, available: 0))
            }
            let status = HCIStatus(rawValue: statusByte)
            guard status.isSuccess else { throw HCIError.commandFailed(Command.opcode, status) }
            do {
                return try Command.ReturnParameters.decode(returnParameters: Array(returnParameters.dropFirst()), context: "\(Command.name) return parameters")
            } catch {
                throw HCIError.malformedResponse(Command.opcode, error)
            }
        case let .status(status):
            guard status.isSuccess else { throw HCIError.commandFailed(Command.opcode, status) }
            if let none = HCINoReturnParameters() as? Command.ReturnParameters { return none }
            throw HCIError.malformedResponse(Command.opcode, .invalidValue(context: Command.name, field: "acknowledgement (Command Status instead of Command Complete)", value: 0))
        }
    }

    private func execute(opcode: HCIOpcode, packet: [UInt8], connectionHandle: UInt16?, timeout: Duration) async throws -> CommandAnswer {
        let id = state.withLock { state -> UInt64 in
            state.nextCommandID += 1
            return state.nextCommandID
        }
        // Fixed now, however late the timer task starts.
        let deadline = clock.now + timeout
        // An operation's abort signal lets the caller go at once, like cancellation.
        let abort = RequestScope.current.abort
        let registration = abort?.whenAborted { [weak self] error in self?.abandonCommand(id: id, error: error) }
        defer { if let registration { abort?.remove(registration) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CommandAnswer, any Error>) in
                let refusal: (any Error)? = state.withLock { state in
                    if state.isClosed { return HCIError.transportClosed(state.closeReason) }
                    // A task cancelled before this point ran its cancellation handler already,
                    // when there was nothing to abandon: do not send the command at all.
                    if Task.isCancelled { return HCIError.cancelled }
                    if let aborted = abort?.error { return aborted }
                    // Started under the lock, so that however short the timeout, the timer
                    // finds the command registered when it fires.
                    let clock = clock
                    let timer = Task { [weak self] in
                        do { try await clock.sleep(until: deadline) } catch { return }
                        self?.abandonCommand(id: id, error: HCIError.commandTimeout(opcode))
                    }
                    let ready: [CommandFlowControl<UInt64>.Command]
                    do {
                        ready = try state.commands.submit(.init(id: id, opcode: opcode, packet: packet, ticket: id, connectionHandle: connectionHandle))
                    } catch {
                        timer.cancel()
                        return HCIError.commandQueueFull(opcode)
                    }
                    state.pendingCommands[id] = PendingCommand(continuation: continuation, timer: timer)
                    noteSend(&state)
                    writeCommands(ready, state: &state)
                    return nil
                }
                if let refusal { continuation.resume(throwing: refusal) } else { flushOutbox() }
            }
        } onCancel: {
            abandonCommand(id: id, error: HCIError.cancelled)
        }
    }

    private func abandonCommand(id: UInt64, error: any Error) {
        let pending = state.withLock { state -> PendingCommand? in
            let (abandoned, ready) = state.commands.abandon(id: id, at: clock.now)
            writeCommands(ready, state: &state)
            guard abandoned != nil else { return nil }
            return state.pendingCommands.removeValue(forKey: id)
        }
        flushOutbox()
        guard let pending else { return }
        if case .commandTimeout? = error as? HCIError { logger.warning("\(error)") }
        pending.timer?.cancel()
        pending.continuation.resume(throwing: error)
    }

    /// Queues commands released by flow control for writing. Called with the state locked, so
    /// that packets reach the transport in the order they were released.
    private func writeCommands(_ commands: [CommandFlowControl<UInt64>.Command], state: inout State) {
        state.outbox += commands.map { .command(id: $0.id, opcode: $0.opcode, packet: $0.packet) }
    }

    /// Writes what the outbox holds, in order, with no lock held: a transport write that waits
    /// (a slow controller) blocks only its writer, never a thread that wants the lock (the
    /// reader handling events, a task queueing a command). One thread writes at a time; a
    /// thread that finds another writing leaves its packets to it and returns. A write that
    /// never progresses ends the transport (``FileDescriptorTransport/writeStallLimit``).
    private func flushOutbox() {
        while true {
            let batch = state.withLock { state -> [Outgoing]? in
                guard !state.isWriting, !state.outbox.isEmpty else { return nil }
                state.isWriting = true
                defer { state.outbox = [] }
                return state.outbox
            }
            guard let batch else { return }
            for item in batch {
                switch item {
                case let .command(id, opcode, packet):
                    do {
                        try transport.send(H4Packet(.command, packet))
                    } catch {
                        logger.error("cannot write command \(opcode): \(error)")
                        // The reader will report the closed transport; fail this one now.
                        if let pending = state.withLock({ $0.pendingCommands.removeValue(forKey: id) }) {
                            pending.timer?.cancel()
                            pending.continuation.resume(throwing: HCIError.transportClosed(error))
                        }
                    }
                case let .acl(packet, completion):
                    do {
                        try transport.send(H4Packet(.acl, packet))
                        completion?(.success(()))
                    } catch {
                        logger.error("cannot write ACL data: \(error)")
                        completion?(.failure(.transportClosed(error)))
                    }
                }
            }
            state.withLock { $0.isWriting = false }
        }
    }

    // MARK: ACL data

    /// Sets the controller's LE ACL buffer size and count (from LE Read Buffer Size).
    public func configureACLBuffers(dataLength: Int, count: Int) {
        state.withLock { state in
            state.aclDataLength = max(1, dataLength)
            writeACL(state.acl.configure(bufferCount: count), state: &state)
        }
        flushOutbox()
    }

    /// The largest ACL payload the controller accepts in one packet.
    public var aclDataLength: Int { state.withLock { $0.aclDataLength } }

    /// Queues an L2CAP PDU (basic header included) for a connection. It is cut into fragments
    /// and written as buffer credits allow, after every PDU queued before it. `completion` runs
    /// once its last fragment is handed to the controller, or with the error that stopped it.
    public func sendACL(connectionHandle: UInt16, pdu: [UInt8], completion: ACLCompletion? = nil) {
        let failure: HCIError? = state.withLock { state in
            if state.isClosed { return .transportClosed(state.closeReason) }
            if state.closedHandles.contains(connectionHandle) { return .connectionClosed(connectionHandle: connectionHandle) }
            noteSend(&state)
            let packets = ACLFragmenter.fragments(of: pdu, connectionHandle: connectionHandle, maximumDataLength: state.aclDataLength)
            let fragments = packets.enumerated().map { index, packet in
                ACLFlowControl<ACLCompletion>.Fragment(
                    connectionHandle: connectionHandle,
                    packet: packet.encode(),
                    completion: index == packets.count - 1 ? completion : nil
                )
            }
            do {
                writeACL(try state.acl.submit(fragments), state: &state)
            } catch {
                return .sendQueueFull(connectionHandle: connectionHandle)
            }
            return nil
        }
        if let failure { completion?(.failure(failure)) } else { flushOutbox() }
    }

    /// Sends an L2CAP PDU and returns once the controller has taken all of it (under its
    /// buffer credits). Queued synchronously in the caller's context, so consecutive calls
    /// keep their order.
    nonisolated(nonsending)
    public func sendACL(connectionHandle: UInt16, pdu: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            sendACL(connectionHandle: connectionHandle, pdu: pdu) { result in
                continuation.resume(with: result.mapError { $0 as any Error })
            }
        }
    }

    /// Returns once the controller has reported every ACL packet queued for the link before the
    /// call as completed (Number Of Completed Packets: on the air, or flushed; what is queued
    /// after does not hold it up), at once when none is pending, when the link ends, when the
    /// transport closes, or when the caller is cancelled.
    /// A host that disconnects right after its last PDU (a pairing's key distribution) waits
    /// for this first: the controller may drop what is still queued when the link ends.
    public func waitUntilDelivered(connectionHandle: UInt16) async {
        let id = state.withLock { state -> UInt64 in
            state.nextDeliveryWaiterID += 1
            return state.nextDeliveryWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    let progress = state.acl.progress(connectionHandle: connectionHandle)
                    if state.isClosed || state.closedHandles.contains(connectionHandle) || progress.completed >= progress.submitted
                        || Task.isCancelled {
                        return true
                    }
                    state.deliveryWaiters[connectionHandle, default: [:]][id] = DeliveryWaiter(target: progress.submitted, continuation: continuation)
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> DeliveryWaiter? in
                let waiter = state.deliveryWaiters[connectionHandle]?.removeValue(forKey: id)
                if state.deliveryWaiters[connectionHandle]?.isEmpty == true { state.deliveryWaiters[connectionHandle] = nil }
                return waiter
            }
            waiter?.continuation.resume()
        }
    }

    /// How many callers wait in ``waitUntilDelivered(connectionHandle:)`` for the link.
    func deliveryWaiterCount(connectionHandle: UInt16) -> Int {
        state.withLock { $0.deliveryWaiters[connectionHandle]?.count ?? 0 }
    }

    /// Queues ACL fragments released by flow control for writing (the state locked); each
    /// PDU's completion runs once its last fragment is written.
    private func writeACL(_ fragments: [ACLFlowControl<ACLCompletion>.Fragment], state: inout State) {
        state.outbox += fragments.map { .acl(packet: $0.packet, completion: $0.completion) }
    }

    // MARK: Receiving

    /// What a batch does once the lock is released.
    private struct Effects {
        var answers: [(PendingCommand, CommandAnswer)] = []
        var dropped: [(ACLCompletion, UInt16)] = []
        var inbound: [HCIInbound] = []
        var delivered: [CheckedContinuation<Void, Never>] = []

        func run() {
            for (pending, answer) in answers {
                pending.timer?.cancel()
                pending.continuation.resume(returning: answer)
            }
            for (completion, handle) in dropped { completion(.failure(.connectionClosed(connectionHandle: handle))) }
            for waiter in delivered { waiter.resume() }
        }
    }

    private func receive(_ event: TransportEvent, receiver: @Sendable ([HCIInbound]) -> HCIBatchContent) {
        switch event {
        case let .packets(packets):
            // When the batch arrived, for the coalescing pace (a clock read only when it can pause).
            let arrival = coalescingWindow > .zero ? clock.now : nil
            // Counted before any answer in it resumes a caller (`effects.run()`), handed on after
            // the receiver has it: see ``waitForReceivedBatches()``.
            let batch = delivery.withLock { progress -> UInt64 in
                progress.begun += 1
                return progress.begun
            }
            var effects = Effects()
            effects.inbound.reserveCapacity(packets.count)
            // The sends so far: one made while the host handles the batch rules out a pause.
            let sendsBefore = state.withLock { state in
                for packet in packets {
                    switch packet.indicator {
                    case .event: receiveEvent(packet.bytes, state: &state, effects: &effects)
                    case .acl: receiveACL(packet.bytes, state: &state, effects: &effects)
                    default: logger.debug("ignoring \(packet.indicator) packet from the controller")
                    }
                }
                return state.sendCount
            }
            effects.run()
            flushOutbox()
            guard !effects.inbound.isEmpty else {
                didDeliver(batch)
                return
            }
            let content = receiver(effects.inbound)
            didDeliver(batch)
            if content == .unsolicitedDataOnly, let arrival {
                pauseIfIdle(sendsBefore: sendsBefore, arrival: arrival, items: effects.inbound.count)
            }
        case let .closed(reason):
            shutdown(reason: reason)
            _ = receiver([.transportClosed(reason)])
            let waiters = delivery.withLock { progress in
                progress.isClosed = true
                defer { progress.waiters = [] }
                return progress.waiters
            }
            waiters.forEach { $0.continuation.resume() }
        }
    }

    /// Returns once every batch the transport's reader had begun when this was called has been
    /// handed to the receiver (``start(receiver:)``). A command's answer resumes its caller
    /// while its batch is still being read, before the events that came with it or just before
    /// it reach the receiver; a caller that must see those events first (a connection that
    /// came through advertising it just stopped) waits for this, then for its receiver.
    public func waitForReceivedBatches() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = delivery.withLock { progress -> Bool in
                if progress.isClosed || progress.delivered >= progress.begun { return true }
                progress.waiters.append((progress.begun, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// Callers of ``waitForReceivedBatches()`` still waiting (for tests).
    var deliveryWaiterCount: Int { delivery.withLock { $0.waiters.count } }

    private func didDeliver(_ batch: UInt64) {
        let ready = delivery.withLock { progress -> [CheckedContinuation<Void, Never>] in
            progress.delivered = batch
            let (ready, waiting) = (progress.waiters.filter { $0.batch <= batch }, progress.waiters.filter { $0.batch > batch })
            progress.waiters = waiting
            return ready.map(\.continuation)
        }
        ready.forEach { $0.resume() }
    }

    private func receiveEvent(_ bytes: ArraySlice<UInt8>, state: inout State, effects: inout Effects) {
        let event: HCIEvent
        do {
            event = try HCIEvent.decode(bytes)
        } catch {
            logger.warning("dropping malformed HCI event: \(error) [\(Hex.encode(bytes, separator: " "))]")
            return
        }
        logger.trace("event \(event)")
        switch event {
        case let .commandComplete(complete):
            // Return parameters that start with a connection handle (after the status) name it.
            let handle = complete.returnParameters.count >= 3 ? ByteReader.uint16(in: complete.returnParameters[...], at: 1).map { $0 & 0x0FFF } : nil
            acknowledge(opcode: complete.opcode, connectionHandle: handle, credits: complete.numberOfHCICommandPackets,
                        answer: .complete(returnParameters: complete.returnParameters), state: &state, effects: &effects)
        case let .commandStatus(status):
            acknowledge(opcode: status.opcode, connectionHandle: nil, credits: status.numberOfHCICommandPackets, answer: .status(status.status),
                        state: &state, effects: &effects)
        case let .numberOfCompletedPackets(completed):
            var ready: [ACLFlowControl<ACLCompletion>.Fragment] = []
            for entry in completed.entries {
                ready += state.acl.complete(connectionHandle: entry.connectionHandle, count: Int(entry.completedPackets))
            }
            writeACL(ready, state: &state)
            if !state.deliveryWaiters.isEmpty {
                for entry in completed.entries { effects.delivered += state.takeDeliveryWaiters(entry.connectionHandle) }
            }
        case let .disconnectionComplete(disconnection):
            if disconnection.status.isSuccess { endConnection(disconnection.connectionHandle, state: &state, effects: &effects) }
            effects.inbound.append(.event(event))
        case let .le(.connectionComplete(complete)) where complete.status.isSuccess:
            startConnection(complete.connectionHandle, state: &state, effects: &effects)
            effects.inbound.append(.event(event))
        case let .le(.enhancedConnectionComplete(complete)) where complete.status.isSuccess:
            startConnection(complete.connectionHandle, state: &state, effects: &effects)
            effects.inbound.append(.event(event))
        case let .le(.enhancedConnectionCompleteV2(complete)) where complete.status.isSuccess:
            startConnection(complete.connectionHandle, state: &state, effects: &effects)
            effects.inbound.append(.event(event))
        default:
            if case let .unknown(code, _) = event {
                logger.debug("unknown HCI event \(Hex.format(code)) passed on")
            }
            effects.inbound.append(.event(event))
        }
    }

    /// A link is gone: its data is refused from now on, its queued fragments fail, its buffers
    /// are free again (the controller flushed them, Core 6.0, Vol 4, Part E, 7.7.5).
    private func endConnection(_ handle: UInt16, state: inout State, effects: inout Effects) {
        state.closedHandles.insert(handle)
        state.reassembler.discard(connectionHandle: handle)
        let (dropped, ready) = state.acl.disconnect(connectionHandle: handle)
        effects.dropped += dropped.compactMap { fragment in fragment.completion.map { ($0, handle) } }
        effects.delivered += state.takeDeliveryWaiters(handle, force: true)
        writeACL(ready, state: &state)
    }

    /// A link comes up on `handle`. A link the controller never reported ended on it (a lost
    /// Disconnection Complete) is ended first: its queued data, credits and waiters are not the
    /// new link's.
    private func startConnection(_ handle: UInt16, state: inout State, effects: inout Effects) {
        if !state.closedHandles.contains(handle), state.acl.progress(connectionHandle: handle).submitted > 0 || state.deliveryWaiters[handle] != nil {
            logger.warning("a new link on handle \(Hex.format(handle)) while the last one there was never reported ended: its data is dropped")
            endConnection(handle, state: &state, effects: &effects)
        }
        state.closedHandles.remove(handle)
    }

    /// Ends a connection the controller never reported ended (the host gave up waiting for its
    /// Disconnection Complete), as if it had.
    public func forgetConnection(_ handle: UInt16) {
        var effects = Effects()
        state.withLock { endConnection(handle, state: &$0, effects: &effects) }
        effects.run()
        flushOutbox()
    }

    private func acknowledge(opcode: HCIOpcode, connectionHandle: UInt16?, credits: UInt8, answer: CommandAnswer,
                             state: inout State, effects: inout Effects) {
        let acknowledgement = state.commands.acknowledge(opcode: opcode, connectionHandle: connectionHandle, credits: credits, at: clock.now)
        writeCommands(acknowledgement.send, state: &state)
        if acknowledgement.wasLate {
            logger.debug("late answer for \(opcode) dropped (its command was given up)")
            return
        }
        guard let pending = acknowledgement.answered.flatMap({ state.pendingCommands.removeValue(forKey: $0.id) }) else {
            if opcode != .noOperation { logger.debug("unsolicited answer for \(opcode)") }
            return
        }
        effects.answers.append((pending, answer))
    }

    private func receiveACL(_ bytes: ArraySlice<UInt8>, state: inout State, effects: inout Effects) {
        let packet: (connectionHandle: UInt16, boundary: ACLPacketBoundary, data: ArraySlice<UInt8>)
        do {
            packet = try ACLDataPacket.parse(bytes)
        } catch {
            logger.warning("dropping ACL data: \(error)")
            return
        }
        let outcome = state.reassembler.append(connectionHandle: packet.connectionHandle, boundary: packet.boundary, data: packet.data)
        if let dropped = outcome.dropped { logger.warning("dropping ACL data: \(dropped)") }
        if let pdu = outcome.pdu { effects.inbound.append(.l2cap(connectionHandle: packet.connectionHandle, pdu: pdu)) }
    }

    // MARK: Receive coalescing

    /// Whether the reader thread is in a coalescing pause.
    var isPausedForCoalescing: Bool { state.withLock { $0.isPaused } }

    /// Pauses the reader thread for up to ``coalescingWindow`` after a batch of `items` pushed
    /// values that arrived at `arrival`, when they come fast enough (`CoalescingPace`), nothing
    /// is awaited and nothing was sent since the batch began (`sendsBefore`); a send ends the
    /// pause early.
    private func pauseIfIdle(sendsBefore: UInt64, arrival: BluetoothClock.Instant, items: Int) {
        let paused = state.withLock { state -> Bool in
            guard state.pace.batchArrived(at: arrival, items: items) else { return false }
            guard !state.isClosed, state.sendCount == sendsBefore, state.pendingCommands.isEmpty, state.acl.queuedCount == 0 else {
                return false
            }
            state.isPaused = true
            return true
        }
        guard paused else { return }
        let (seconds, attoseconds) = coalescingWindow.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        guard pauseEnd.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut else { return }
        let signalled = state.withLock { state -> Bool in
            defer { state.isPaused = false }
            return !state.isPaused
        }
        // A send ended the pause as it timed out: take its signal, already given under the
        // lock, so that the next pause is not cut short by it.
        if signalled { pauseEnd.wait() }
    }

    /// A command or ACL packet is being submitted: no pause from now on for the current
    /// batch, and a paused reader goes back to reading. Called with the state locked.
    private func noteSend(_ state: inout State) {
        state.sendCount &+= 1
        endPause(&state)
    }

    private func endPause(_ state: inout State) {
        guard state.isPaused else { return }
        state.isPaused = false
        pauseEnd.signal()
    }

    private func shutdown(reason: TransportError?) {
        let (commands, fragments, deliveryWaiters) = state.withLock { state -> ([PendingCommand], [ACLCompletion], [CheckedContinuation<Void, Never>]) in
            guard !state.isClosed else { return ([], [], []) }
            let deliveryWaiters = state.deliveryWaiters.values.flatMap { $0.values.map(\.continuation) }
            state.deliveryWaiters = [:]
            state.isClosed = true
            state.closeReason = reason
            _ = state.commands.removeAll()
            let commands = Array(state.pendingCommands.values)
            state.pendingCommands.removeAll()
            var fragments = state.acl.removeAll().compactMap(\.completion)
            // A writer at work fails what it holds itself (its writes fail); otherwise nobody would.
            if !state.isWriting {
                for case let .acl(_, completion?) in state.outbox { fragments.append(completion) }
                state.outbox = []
            }
            return (commands, fragments, deliveryWaiters)
        }
        deliveryWaiters.forEach { $0.resume() }
        if let reason { logger.error("\(reason)") } else { logger.debug("transport \(transport.name) closed") }
        for command in commands {
            command.timer?.cancel()
            command.continuation.resume(throwing: HCIError.transportClosed(reason))
        }
        fragments.forEach { $0(.failure(.transportClosed(reason))) }
    }
}
