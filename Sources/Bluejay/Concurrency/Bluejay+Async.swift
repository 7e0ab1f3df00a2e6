import BluetoothHost
import Foundation

/// The same features with Swift concurrency. Every function goes through the same FIFO
/// queue as the callback API; cancelling the calling `Task` cancels the request, whether it
/// is still queued (it never runs) or running (its GATT request or connection attempt is
/// abandoned). Failures are thrown as ``BluejayError``.
extension Bluejay {
    /// Waits until ``start(mode:)`` has opened the controller; throws
    /// ``BluejayError/bluetoothUnavailable(_:)`` if it could not.
    public func waitUntilReady() async throws(BluejayError) {
        let events = connectionEvents()
        while true {
            let (lifecycle, available, imminent, reason) = state.withLock {
                ($0.lifecycle, $0.isBluetoothAvailable, $0.isBluetoothStateUpdateImminent, $0.unavailableReason)
            }
            guard lifecycle == .running else { throw .notStarted }
            if available { return }
            if !imminent { throw .bluetoothUnavailable(reason) }
            var iterator = events.makeAsyncIterator()
            guard let event = await iterator.next() else { throw .cancelled }
            if case .bluetoothAvailable(true) = event { return }
            if Task.isCancelled { throw .cancelled }
        }
    }

    /// Connects; see ``connect(_:timeout:warningOptions:completion:)``.
    @discardableResult
    public func connect(_ peripheral: PeripheralIdentifier, timeout: Timeout = .none) async throws(BluejayError) -> PeripheralIdentifier {
        if let refusal = refusal(for: "connect") { throw refusal }
        return try await awaitOperation { id, deliver in
            requestConnection(to: peripheral, timeout: timeout, purpose: .request, atFront: false, id: id, retryLimits: .replace(nil),
                              deliver: deliver)
        }
    }

    /// Disconnects; see ``disconnect(immediate:completion:)``. Returns the peripheral that
    /// was disconnected.
    @discardableResult
    public func disconnect(immediate: Bool = false) async throws(BluejayError) -> PeripheralIdentifier {
        guard hasStarted else { throw .notStarted }
        return try await awaitOperation { id, deliver in
            if immediate {
                cancelRequests(disconnecting: true, deliver: deliver)
            } else {
                submitDisconnection(atFront: false, id: id, deliver: deliver)
            }
        }
    }

    /// Reads a characteristic; see `read(from:timeout:completion:)`.
    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier, timeout: Timeout? = nil) async throws(BluejayError) -> R {
        let data = try await performGATT("read \(characteristic)", timeout: timeout) { link in try await link.read(characteristic) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    /// Writes a characteristic; see ``write(to:value:type:timeout:completion:)``.
    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
                                        timeout: Timeout? = nil) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await performGATT("write \(data.count) bytes to \(characteristic)\(type == .withoutResponse ? " without response" : type == .signed ? " signed" : "")",
                              timeout: timeout) { link in
            try await link.write(data, to: characteristic, type: type)
        }
    }

    /// Reads a descriptor; `timeout` replaces the operation time limit for this call.
    public func read<R: Receivable>(from descriptor: DescriptorIdentifier, timeout: Timeout? = nil) async throws(BluejayError) -> R {
        let data = try await performGATT("read \(descriptor)", timeout: timeout) { link in try await link.read(descriptor) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    /// Writes a descriptor; `timeout` replaces the operation time limit for this call.
    public func write<S: Transmittable>(to descriptor: DescriptorIdentifier, value: S, timeout: Timeout? = nil) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await performGATT("write \(data.count) bytes to \(descriptor)", timeout: timeout) { link in try await link.write(data, to: descriptor) }
    }

    /// The signal strength of the connection, in dBm; `timeout` replaces the operation time limit.
    public func rssi(timeout: Timeout? = nil) async throws(BluejayError) -> Int {
        try await performGATT("read RSSI", timeout: timeout) { link in try await link.readRSSI() }
    }

    /// Listens to a characteristic and returns its values once notifications are on. The
    /// stream ends when the listen ends (``endListen(to:timeout:)``, an expected disconnection, a
    /// newer listen replacing it) and throws on the first error (a value `R` cannot be made
    /// from, or, with ``broadcastErrorsToListeners``, a disconnection). Stopping the iteration
    /// ends the listen (just this listener, when several share the characteristic). It shares
    /// `multipleListenOption`'s rules with the callback API: with ``MultipleListenOption/shared``
    /// several streams (and callbacks) take the same values.
    ///
    /// The values of each transport batch are made into `R` on the transport's reader thread
    /// and handed over at once: one wake-up of the consumer per batch. The stream holds at most
    /// ``listenBufferLimit`` values the consumer has not taken; past that the newest are
    /// dropped, with a warning in the log.
    public func listen<R: Receivable & Sendable>(to characteristic: CharacteristicIdentifier,
                                                 multipleListenOption: MultipleListenOption = .trap) async throws(BluejayError) -> ValueStream<R> {
        try await listenStream(to: characteristic, option: multipleListenOption, timeout: nil) { (data: Data) throws(BluejayError) -> R in
            try decode(data, as: R.self)
        }
    }

    /// ``listen(to:multipleListenOption:)`` with a time limit of its own for turning the
    /// notifications on, in place of the operation time limit (``Timeout/none``: none).
    public func listen<R: Receivable & Sendable>(to characteristic: CharacteristicIdentifier, multipleListenOption: MultipleListenOption = .trap,
                                                 timeout: Timeout) async throws(BluejayError) -> ValueStream<R> {
        try await listenStream(to: characteristic, option: multipleListenOption, timeout: timeout) {
            (data: Data) throws(BluejayError) -> R in try decode(data, as: R.self)
        }
    }

    /// The stream of a listen whose values `decode` makes.
    func listenStream<R: Sendable>(to characteristic: CharacteristicIdentifier, option multipleListenOption: MultipleListenOption,
                                   timeout: Timeout?, decode: @escaping @Sendable (Data) throws(BluejayError) -> R) async throws(BluejayError) -> ValueStream<R> {
        if let refusal = refusal(for: "listen") { throw refusal }
        let (stream, continuation) = ValueStream.makeStream(of: R.self, limit: Self.listenBufferLimit)
        let handler: ListenHandler = { result in
            do {
                continuation.yield(try decode(result.get()))
            } catch {
                continuation.finish(throwing: error)
            }
        }
        let batchHandler: ListenBatchHandler = { [weak self] values in
            if case let .dropped(count) = continuation.yield(decoding: values, with: decode) {
                self?.log(.warning, "the consumer of the listen on \(characteristic) is behind: \(count) value(s) dropped")
            }
        }
        try await awaitOperation { (id, deliver: @escaping @Sendable (Result<Void, BluejayError>) -> Void) in
            let listener = installListen(on: characteristic, handler: handler, batchHandler: batchHandler, option: multipleListenOption,
                                           synchronous: false, onRemoval: { continuation.finish() }, operationID: id, timeout: timeout,
                                         installed: deliver)
            if let listener {
                continuation.onTermination = { [weak self] in
                    self?.removeListen(on: characteristic, listener: listener, privileged: true) { _ in }
                }
            }
        }
        return stream
    }

    /// How many values an `async` listen holds for a consumer that falls behind (as a host
    /// subscriber does, `GATTClient/subscriberBufferLimit`).
    public static let listenBufferLimit = GATTClient.subscriberBufferLimit

    /// Ends a listen; see ``endListen(to:timeout:completion:)``. `timeout` limits turning the
    /// notifications off, in place of the operation time limit.
    public func endListen(to characteristic: CharacteristicIdentifier, timeout: Timeout? = nil) async throws(BluejayError) {
        if let refusal = refusal(for: "endListen") { throw refusal }
        try await awaitOperation { id, deliver in
            removeListen(on: characteristic, privileged: false, operationID: id, timeout: timeout, deliver: deliver)
        }
    }

    /// Scans; see ``scan(duration:allowDuplicates:throttleRSSIDelta:timeout:endsWhenConnecting:serviceIdentifiers:discovery:expired:stopped:)``.
    /// The stream ends when the scan stops (duration, ``stopScanning()``, a connection
    /// requested with `endsWhenConnecting`) and throws if it stops with an error
    /// (``BluejayError/scanTimeout(after:)`` when `timeout` passed with nothing discovered).
    /// Stopping the iteration stops the scan.
    public func scan(duration: TimeInterval = 0, allowDuplicates: Bool = false, throttleRSSIDelta: Int = 5,
                     timeout: TimeInterval = 0, endsWhenConnecting: Bool = false,
                     serviceIdentifiers: [ServiceIdentifier]? = nil) -> ValueStream<ScanEvent> {
        let events = ScanEventStream()
        let session = startScan(
            duration: duration, allowDuplicates: allowDuplicates, throttleRSSIDelta: throttleRSSIDelta, timeout: timeout,
            endsWhenConnecting: endsWhenConnecting, serviceIdentifiers: serviceIdentifiers, reporting: events.reporting,
            stopped: events.stopped)
        if let session {
            events.continuation.onTermination = { [weak self] in
                guard let self, self.state.withLock({ $0.scan === session }) else { return }
                if !session.requestStop(error: nil) { self.runner.cancel(session.operationID) }
            }
        }
        return events.stream
    }

    /// Availability, connections, disconnections and service changes as they happen, from
    /// now on. The stream ends when the consumer stops iterating.
    public func connectionEvents() -> AsyncStream<ConnectionEvent> {
        connectionEventListeners.makeStream()
    }

    /// Bridges an internal request to `async`: `start` gets an operation identifier to use
    /// and a one-shot delivery. Cancelling the calling task cancels that operation.
    func awaitOperation<T: Sendable>(_ start: (UInt64, @escaping @Sendable (Result<T, BluejayError>) -> Void) -> Void) async throws(BluejayError) -> T {
        let id = runner.makeID()
        let result: Result<T, BluejayError> = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, BluejayError>, Never>) in
                guard !Task.isCancelled else {
                    continuation.resume(returning: .failure(.cancelled))
                    return
                }
                let once = OneShot<T> { continuation.resume(returning: $0) }
                start(id) { once.deliver($0) }
            }
        } onCancel: {
            runner.cancel(id)
        }
        return try result.get()
    }
}
