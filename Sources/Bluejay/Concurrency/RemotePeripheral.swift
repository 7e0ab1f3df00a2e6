import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Foundation
import Logging
import Synchronization

/// One connected peripheral of a ``BluejayCentral``, with its own FIFO queue: its requests
/// run one at a time in order, each with the central's operation time limit, and fail with
/// ``BluejayError/disconnected(_:reason:)`` when the link drops. Cancelling the calling task
/// cancels the request.
public final class RemotePeripheral: Sendable, CustomStringConvertible {
    /// Who the peripheral is: its identity once known (a bonded peer's, or the one a pairing on
    /// this link revealed when it was reached at a resolvable private address), else the
    /// address it was connected at.
    public var identifier: PeripheralIdentifier {
        let connected = link.identifier
        guard let identity = link.connection.identity else { return connected }
        return PeripheralIdentifier(address: identity, name: connected.name)
    }
    let link: PeripheralLink
    /// The backend the link runs on (bonds are the backend's).
    let backend: any CentralBackend
    private let runner: OperationRunner
    private let limit: Duration?
    private let clock: BluetoothClock
    private let serviceChangeStream: AsyncStream<[ServiceIdentifier]>
    private let droppedServiceChanges = Atomic<Int>(0)
    private let logger: Logger
    let stateWatchers = RemotePeripheralStateWatchers()

    init(link: PeripheralLink, backend: any CentralBackend, changes: AsyncStream<GATTServiceChange>, operationTimeout: Timeout, clock: BluetoothClock, logger: Logger) {
        self.link = link
        self.backend = backend
        limit = operationTimeout.duration
        self.clock = clock
        self.logger = logger
        runner = OperationRunner { message in logger.debug("\(message())") }  // made only when debug logging is on
        let (stream, continuation) = AsyncStream.makeStream(of: [ServiceIdentifier].self,
                                                            bufferingPolicy: .bufferingNewest(Self.serviceChangeBufferLimit))
        serviceChangeStream = stream
        let runner = self.runner
        let peripheral = link.identifier
        let stateWatchers = self.stateWatchers
        Task {
            guard let reason = try? await link.connection.waitForDisconnection() else { return }
            logger.info("disconnected from \(peripheral): \(reason)")
            runner.failAll(.disconnected(peripheral, reason: reason)) { $0.kind != .disconnect }
            stateWatchers.publish(.disconnected(reason))
        }
        Task { [weak self] in
            for await change in changes {
                // Invalidated whether or not the app reads the stream.
                if case .dropped = continuation.yield(link.invalidate(change)) { self?.noteDroppedServiceChange() }
            }
            continuation.finish()
        }
    }

    /// How many Service Changed reports ``serviceChanges`` holds for a consumer that falls
    /// behind, or never reads it (the cached services are invalidated either way). Past it
    /// the oldest are dropped, counted and logged: a peripheral that indicates Service
    /// Changed again and again must not make memory grow without bound.
    public static let serviceChangeBufferLimit = 64

    /// How many Service Changed reports ``serviceChanges`` dropped.
    var droppedServiceChangeCount: Int { droppedServiceChanges.load(ordering: .relaxed) }

    private func noteDroppedServiceChange() {
        let dropped = droppedServiceChanges.add(1, ordering: .relaxed).newValue
        // The first, then one line per buffer's worth.
        if dropped % Self.serviceChangeBufferLimit == 1 {
            logger.warning("\(identifier): serviceChanges is not read; \(dropped) Service Changed report(s) dropped so far")
        }
    }

    public var isConnected: Bool { link.connection.isConnected }
    /// The ATT MTU negotiated with this peripheral.
    public var attMTU: Int { link.mtu }
    /// The longest value one write of `type` carries.
    public func maximumWriteValueLength(for type: WriteType) -> Int { link.maximumWriteValueLength(for: type) }
    /// The underlying connection: our host's `Connection`, or BlueZ's link (cast it to
    /// `Connection` for what only our host offers).
    public var connection: any CentralConnection { link.connection }

    public var description: String { "\(identifier)" }

    // Every request takes a `timeout` of its own, in place of the central's operation time
    // limit (``Timeout/none``: none).

    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier, timeout: Timeout? = nil) async throws(BluejayError) -> R {
        let data = try await perform("read \(characteristic)", timeout: timeout) { link in try await link.read(characteristic) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
                                        timeout: Timeout? = nil) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await perform("write \(data.count) bytes to \(characteristic)", timeout: timeout) { link in try await link.write(data, to: characteristic, type: type) }
    }

    public func read<R: Receivable>(from descriptor: DescriptorIdentifier, timeout: Timeout? = nil) async throws(BluejayError) -> R {
        let data = try await perform("read \(descriptor)", timeout: timeout) { link in try await link.read(descriptor) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    public func write<S: Transmittable>(to descriptor: DescriptorIdentifier, value: S, timeout: Timeout? = nil) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await perform("write \(data.count) bytes to \(descriptor)", timeout: timeout) { link in try await link.write(data, to: descriptor) }
    }

    /// Turns notifications on and returns the values; stopping the iteration turns them off
    /// (when no other listener of this peripheral wants them). The stream throws when the
    /// link drops or a value cannot be made into `R`.
    public func listen<R: Receivable & Sendable>(to characteristic: CharacteristicIdentifier,
                                                 timeout: Timeout? = nil) async throws(BluejayError) -> ValueStream<R> {
        try await listenStream(to: characteristic, timeout: timeout) { (data: Data) throws(BluejayError) -> R in try decode(data, as: R.self) }
    }

    /// The stream of a listen whose values `decode` makes.
    func listenStream<R: Sendable>(to characteristic: CharacteristicIdentifier, timeout: Timeout?,
                                   decode: @escaping @Sendable (Data) throws(BluejayError) -> R) async throws(BluejayError) -> ValueStream<R> {
        let (stream, continuation) = ValueStream.makeStream(of: R.self, limit: Bluejay.listenBufferLimit)
        let peripheral = identifier
        let subscription = try await perform("listen to \(characteristic)", timeout: timeout) { link in
            try await link.subscribe(characteristic, ended: { error in
                continuation.finish(throwing: error.map { BluejayError($0, peripheral: peripheral, operation: "listening to \(characteristic)") })
            }, handler: { values in
                // Made into R on the reader thread: one wake-up of the consumer per batch.
                continuation.yield(decoding: values.map { Data($0.value) }, with: decode)
            })
        }
        continuation.onTermination = { subscription.cancel() }
        return stream
    }

    /// The signal strength of the link, in dBm.
    public func rssi(timeout: Timeout? = nil) async throws(BluejayError) -> Int {
        try await perform("read RSSI", timeout: timeout) { link in try await link.readRSSI() }
    }

    /// Queued like every request: waits for those before it, then disconnects.
    public func disconnect() async throws(BluejayError) {
        let connection = link.connection
        let stateWatchers = self.stateWatchers
        try await runner.perform("disconnect", kind: .disconnect) {
            if connection.isConnected { stateWatchers.publish(.disconnecting) }
            try await connection.disconnect(reason: .remoteUserTerminatedConnection)
        }
    }

    /// Runs an app-defined operation on this peripheral when its turn in the queue comes
    /// (see ``PeripheralOperation``), with the central's operation time limit unless it has its
    /// own. Cancelling the calling task cancels it.
    public func run<Operation: PeripheralOperation>(_ operation: Operation) async throws(BluejayError) -> Operation.Output {
        let link = self.link
        let peripheral = identifier
        return try await runner.run(operation, defaultLimit: limit, clock: clock) {
            guard link.connection.isConnected else {
                throw BluejayError.disconnected(peripheral, reason: link.connection.disconnectReason)
            }
            return link
        }
    }

    /// Returns once the link is down, with the controller's reason; throws
    /// ``BluejayError/cancelled`` if the calling task is cancelled first.
    public func waitForDisconnection() async throws(BluejayError) -> HCIStatus {
        do {
            return try await link.connection.waitForDisconnection()
        } catch {
            throw .cancelled
        }
    }

    /// The services invalidated by each Service Changed indication (empty: services were
    /// added). A single stream: iterate it from one task. It holds the newest
    /// ``serviceChangeBufferLimit`` reports the consumer has not taken.
    public var serviceChanges: AsyncStream<[ServiceIdentifier]> { serviceChangeStream }

    func perform<T: Sendable>(_ name: String, timeout: Timeout? = nil,
                              _ work: @escaping @Sendable (PeripheralLink) async throws -> T) async throws(BluejayError) -> T {
        let link = self.link
        let limit = timeout.map(\.duration) ?? self.limit
        let clock = self.clock
        let peripheral = identifier
        return try await runner.perform(name, kind: .gatt) {
            guard link.connection.isConnected else {
                throw BluejayError.disconnected(peripheral, reason: link.connection.disconnectReason)
            }
            return try await withTimeLimit(limit, clock: clock, operation: name) { try await work(link) }
        }
    }
}
