import BluetoothHost
import Foundation
import Synchronization

extension Bluejay {
    /// Writes `value` to `writeTo`, then gives the first value that arrives on `listenTo`
    /// after the write (LittleBluetooth's `writeAndListen`): an ordinary queued operation,
    /// outside background tasks. When nothing listens to `listenTo`, a listen is set up
    /// before the write (so no answer is missed) and ended after the answer; when the app
    /// already listens to it, that listen stays and gets the value too.
    ///
    /// - Parameters:
    ///   - writeCharacteristic: the characteristic written.
    ///   - value: what is written.
    ///   - type: with or without response.
    ///   - listenCharacteristic: the characteristic whose next value is the answer.
    ///   - timeout: how long to wait for the answer after the write; ``Timeout/none`` uses the
    ///     operation time limit (``StartOptions/operationTimeout``).
    ///   - completion: the answer made into `R`, or why there is none
    ///     (``BluejayError/timedOut(operation:after:)``, the write's or the listen's failure).
    public func writeAndListen<S: Transmittable, R: Receivable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        listenTo listenCharacteristic: CharacteristicIdentifier, timeout: Timeout = .none,
        completion: @escaping @Sendable (ReadResult<R>) -> Void
    ) {
        let deliver = onCallbackQueue { (result: Result<Data, BluejayError>) in completion(result.decoded()) }
        startWriteAndListen(writeTo: writeCharacteristic, data: value.toBluetoothData(), type: type, listenTo: listenCharacteristic,
                            timeout: timeout, deliver: deliver)
    }

    /// Writes, then gives the first value on `listenTo`; see
    /// ``writeAndListen(writeTo:value:type:listenTo:timeout:completion:)``.
    public func writeAndListen<S: Transmittable, R: Receivable & Sendable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        listenTo listenCharacteristic: CharacteristicIdentifier, timeout: Timeout = .none
    ) async throws(BluejayError) -> R {
        let data = value.toBluetoothData()
        let answer: Data = try await awaitOperation { _, deliver in
            startWriteAndListen(writeTo: writeCharacteristic, data: data, type: type, listenTo: listenCharacteristic,
                                timeout: timeout, deliver: deliver)
        }
        return try Result<Data, BluejayError>.success(answer).decoded().get()
    }

    /// Writes `value` to `writeTo`, then reads `readFrom`, one after the other in the queue
    /// (LittleBluetooth's `writeAndRead`); the write's failure ends it. `timeout` bounds the
    /// two together, in place of the operation time limit.
    public func writeAndRead<S: Transmittable, R: Receivable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        readFrom readCharacteristic: CharacteristicIdentifier, timeout: Timeout? = nil, completion: @escaping @Sendable (ReadResult<R>) -> Void
    ) {
        let data = value.toBluetoothData()
        let deliver = onCallbackQueue { (result: Result<Data, BluejayError>) in completion(result.decoded()) }
        submitGATT("write \(data.count) bytes to \(writeCharacteristic) and read \(readCharacteristic)", timeout: timeout, work: { link in
            try await link.write(data, to: writeCharacteristic, type: type)
            return try await link.read(readCharacteristic)
        }, deliver: deliver)
    }

    /// Writes, then reads; see ``writeAndRead(writeTo:value:type:readFrom:timeout:completion:)``.
    public func writeAndRead<S: Transmittable, R: Receivable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        readFrom readCharacteristic: CharacteristicIdentifier, timeout: Timeout? = nil
    ) async throws(BluejayError) -> R {
        let data = value.toBluetoothData()
        let answer: Data = try await awaitOperation { id, deliver in
            submitGATT("write \(data.count) bytes to \(writeCharacteristic) and read \(readCharacteristic)", id: id, timeout: timeout, work: { link in
                try await link.write(data, to: writeCharacteristic, type: type)
                return try await link.read(readCharacteristic)
            }, deliver: deliver)
        }
        return try Result<Data, BluejayError>.success(answer).decoded().get()
    }

    /// The steps, queued now (so that they keep their place in the FIFO queue): the listen
    /// if none is there, the write; then the first value of `listenTo` from the stream of all
    /// notifications, or a failure. `deliver` is called once; the temporary listen ends after.
    private func startWriteAndListen(writeTo writeCharacteristic: CharacteristicIdentifier, data: Data, type: WriteType,
                                     listenTo listenCharacteristic: CharacteristicIdentifier, timeout: Timeout,
                                     deliver: @escaping @Sendable (Result<Data, BluejayError>) -> Void) {
        if let refusal = refusal(for: "writeAndListen") {
            deliver(.failure(refusal))
            return
        }
        let limit = timeout.duration ?? operationTimeLimit
        let operation = "write to \(writeCharacteristic) and listen to \(listenCharacteristic)"
        let outcome = WriteAndListenOutcome()
        // Made before anything is queued: no answer can come before it listens.
        let answers = notifications()
        let ownsListen = !isListening(to: listenCharacteristic)
        let waiter = Task<Void, Never> {
            for await notification in answers where notification.characteristic == listenCharacteristic {
                outcome.finish(.success(notification.value))
                return
            }
        }
        let timer = limit.map { limit in
            Task<Void, Never> { [clock] in
                guard await sleepUnlessCancelled(limit, clock: clock) else { return }
                outcome.finish(.failure(.timedOut(operation: operation, after: limit)))
            }
        }
        outcome.bind(OneShot<Data> { [weak self] result in
            waiter.cancel()
            timer?.cancel()
            if let self, let listener = outcome.listener {
                self.removeListen(on: listenCharacteristic, listener: listener, privileged: false) { _ in }
            }
            deliver(result)
        })
        if ownsListen {
            outcome.listener = installListen(on: listenCharacteristic, handler: { result in
                if case let .failure(error) = result { outcome.finish(.failure(error)) }
            }, option: .trap, synchronous: false) { result in
                if case let .failure(error) = result { outcome.finish(.failure(error)) }
            }
        }
        submitGATT(operation, work: { link in
            try await link.write(data, to: writeCharacteristic, type: type)
        }, deliver: { result in
            if case let .failure(error) = result { outcome.finish(.failure(error)) }
        })
    }
}

/// A writeAndListen's one outcome, and its own listen (when the app had none).
private final class WriteAndListenOutcome: Sendable {
    private struct State {
        var listener: UInt64?
        var finish: OneShot<Data>?
        var early: Result<Data, BluejayError>?
    }

    private let state = Mutex(State())

    var listener: UInt64? {
        get { state.withLock { $0.listener } }
        set { state.withLock { $0.listener = newValue } }
    }

    /// Sets who is told; an outcome that came before is told at once.
    func bind(_ finish: OneShot<Data>) {
        let early = state.withLock { state -> Result<Data, BluejayError>? in
            state.finish = finish
            return state.early
        }
        if let early { finish.deliver(early) }
    }

    func finish(_ result: Result<Data, BluejayError>) {
        let target = state.withLock { state -> OneShot<Data>? in
            if state.finish == nil, state.early == nil { state.early = result }
            return state.finish
        }
        target?.deliver(result)
    }
}
