import BluetoothHost
import Foundation
import Synchronization

/// The connected peripheral as a background task sees it: every call blocks the task's
/// thread until it is done, and throws on failure. The calls go through Bluejay's FIFO
/// queue like any request, each with the operation time limit.
///
/// Valid only inside the background task it was given to, and only on its thread: anywhere
/// else the calls throw ``BluejayError/synchronizedPeripheralOutsideTask``.
public final class SynchronizedPeripheral: Sendable {
    private let bluejay: Bluejay
    private let taskID: UInt64
    private let isValid = Mutex(true)

    init(bluejay: Bluejay, taskID: UInt64) {
        self.bluejay = bluejay
        self.taskID = taskID
    }

    func invalidate() { isValid.withLock { $0 = false } }

    /// The peripheral the task works with.
    public var peripheralIdentifier: PeripheralIdentifier? { bluejay.connectedPeripheral }

    // MARK: Reading and writing

    /// Reads a characteristic and makes `R` from its bytes.
    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier) throws -> R {
        let data = try perform("read \(characteristic)") { link in try await link.read(characteristic) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    /// Writes a value (with response by default).
    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse) throws {
        let data = value.toBluetoothData()
        try perform("write \(data.count) bytes to \(characteristic)") { link in try await link.write(data, to: characteristic, type: type) }
    }

    /// Writes `value` to `writeTo`, then reads `readFrom`, as one request of the queue (nothing
    /// else runs in between) under one time limit.
    public func writeAndRead<S: Transmittable, R: Receivable>(writeTo writeCharacteristic: CharacteristicIdentifier, value: S,
                                                              type: WriteType = .withResponse,
                                                              readFrom readCharacteristic: CharacteristicIdentifier) throws -> R {
        let data = value.toBluetoothData()
        let answer = try perform("write to \(writeCharacteristic) and read \(readCharacteristic)") { link in
            try await link.write(data, to: writeCharacteristic, type: type)
            return try await link.read(readCharacteristic)
        }
        return try Result<Data, BluejayError>.success(answer).decoded().get()
    }

    /// Reads a descriptor and makes `R` from its bytes.
    public func read<R: Receivable>(from descriptor: DescriptorIdentifier) throws -> R {
        let data = try perform("read \(descriptor)") { link in try await link.read(descriptor) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    /// Writes a descriptor.
    public func write<S: Transmittable>(to descriptor: DescriptorIdentifier, value: S) throws {
        let data = value.toBluetoothData()
        try perform("write \(data.count) bytes to \(descriptor)") { link in try await link.write(data, to: descriptor) }
    }

    /// The signal strength of the link, in dBm.
    public func readRSSI() throws -> Int {
        try perform("read RSSI") { link in try await link.readRSSI() }
    }

    /// The longest value one write of `type` carries: MTU - 3 bytes without response, 512
    /// with response. 0 when not connected.
    public func maximumWriteValueLength(for type: WriteType) -> Int {
        bluejay.maximumWriteValueLength(for: type) ?? 0
    }

    // MARK: Listening

    /// Listens and calls `completion` with each value (on this thread) until it returns
    /// ``ListenAction/done``, then ends the listen. Use it to wait for expected values, not
    /// for continuous monitoring (that is the regular ``Bluejay/listen(to:multipleListenOption:completion:)``).
    /// - Parameters:
    ///   - completion: called with each value; return ``ListenAction/done`` to end the listen.
    ///   - characteristic: the characteristic to listen to.
    ///   - timeout: the longest the whole listen may take; ``Timeout/none`` waits
    ///     until done, disconnected or cancelled.
    public func listen<R: Receivable>(to characteristic: CharacteristicIdentifier, timeout: Timeout = .none,
                                      completion: (R) throws -> ListenAction) throws {
        try listenLoop(characteristic, timeout: timeout, name: "listen to \(characteristic)", before: {}) { data in
            try completion(try Result<Data, BluejayError>.success(data).decoded().get())
        }
    }

    /// Turns off notifications of a characteristic (nothing happens if none are on).
    public func endListen(to characteristic: CharacteristicIdentifier) throws {
        try check()
        let result = BlockingResult<Void>()
        bluejay.removeListen(on: characteristic, privileged: true, deliver: result.deliver)
        try result.wait()
    }

    /// Listens to `listenTo`, then writes `value` to `writeTo`, then handles the answers as
    /// ``listen(to:timeout:completion:)`` does. Listening first means no answer is missed.
    public func writeAndListen<S: Transmittable, R: Receivable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse,
        listenTo listenCharacteristic: CharacteristicIdentifier, timeoutInSeconds timeout: Timeout = .none,
        completion: (R) throws -> ListenAction
    ) throws {
        let data = value.toBluetoothData()
        try listenLoop(listenCharacteristic, timeout: timeout, name: "write to \(writeCharacteristic) and listen to \(listenCharacteristic)",
                       before: { try self.perform("write \(data.count) bytes to \(writeCharacteristic)") { link in
                           try await link.write(data, to: writeCharacteristic, type: type)
                       } }) { answer in
            try completion(try Result<Data, BluejayError>.success(answer).decoded().get())
        }
    }

    /// Like ``writeAndListen(writeTo:value:type:listenTo:timeoutInSeconds:completion:)`` for a
    /// peripheral that cuts its answer into notifications of any size: the values are
    /// joined until `expectedLength` bytes have arrived, then `R` is made from them. With
    /// ``ListenAction/keepListening`` the next `expectedLength` bytes are assembled.
    /// - Throws: ``BluejayError/assembledTooMuchData(expected:received:)`` when a value runs
    ///   past the expected length.
    public func writeAndAssemble<S: Transmittable, R: Receivable>(
        writeTo writeCharacteristic: CharacteristicIdentifier, value: S, listenTo listenCharacteristic: CharacteristicIdentifier,
        expectedLength: Int, timeoutInSeconds timeout: Timeout = .none, completion: (R) throws -> ListenAction
    ) throws {
        guard expectedLength > 0 else { throw BluejayError.dataOutOfBounds(start: 0, length: expectedLength, count: 0) }
        let data = value.toBluetoothData()
        var assembled = Data()
        try listenLoop(listenCharacteristic, timeout: timeout, name: "write to \(writeCharacteristic) and assemble \(expectedLength) bytes",
                       before: { try self.perform("write \(data.count) bytes to \(writeCharacteristic)") { link in
                           try await link.write(data, to: writeCharacteristic, type: .withResponse)
                       } }) { part in
            assembled.append(part)
            guard assembled.count >= expectedLength else { return .keepListening }
            guard assembled.count == expectedLength else {
                throw BluejayError.assembledTooMuchData(expected: expectedLength, received: assembled.count)
            }
            let whole = assembled
            assembled = Data()
            return try completion(try Result<Data, BluejayError>.success(whole).decoded().get())
        }
    }

    /// Listens and drops every value until none has arrived for `nonZeroTimeout` (the idle
    /// window: the flush goes on for as long as values keep coming), then ends the listen
    /// and calls `completion`.
    /// - Throws: ``BluejayError/indefiniteFlush`` when the window is not positive.
    public func flushListen(to characteristic: CharacteristicIdentifier, nonZeroTimeout: Timeout, completion: () -> Void) throws {
        guard let window = nonZeroTimeout.duration, window > .zero else { throw BluejayError.indefiniteFlush }
        try check()
        let clock = bluejay.clock
        let inbox = BlockingInbox<Result<Data, BluejayError>>(clock: clock)
        let listener = try installSynchronousListen(characteristic, inbox: inbox)
        defer { endListenQuietly(characteristic, listener: listener) }
        var flushed = 0
        // The window restarts when each value arrives (not when this thread gets to it).
        var deadline = clock.now + window
        while let next = inbox.take(until: deadline) {
            _ = try next.value.get()
            flushed += 1
            deadline = next.time + window
        }
        bluejay.log(.info, "flushed \(flushed) value(s) from \(characteristic)")
        completion()
    }

    // MARK: Machinery

    /// Throws unless called on the task's own thread while it runs.
    private func check() throws(BluejayError) {
        guard isValid.withLock({ $0 }), bluejay.isCurrentBackgroundTask(taskID) else { throw .synchronizedPeripheralOutsideTask }
    }

    /// Queues a GATT operation and blocks until its outcome.
    @discardableResult
    private func perform<T: Sendable>(_ name: String, _ work: @escaping @Sendable (PeripheralLink) async throws -> T) throws(BluejayError) -> T {
        try check()
        let result = BlockingResult<T>()
        bluejay.submitGATT(name, privileged: true, work: work, deliver: result.deliver)
        return try result.wait()
    }

    /// Returns the listener, which is all the task ends (an app's shared listeners stay).
    private func installSynchronousListen(_ characteristic: CharacteristicIdentifier,
                                          inbox: BlockingInbox<Result<Data, BluejayError>>) throws(BluejayError) -> UInt64? {
        let installed = BlockingResult<Void>()
        let listener = bluejay.installListen(on: characteristic, handler: { inbox.put($0) }, option: .trap, synchronous: true,
                                             installed: installed.deliver)
        try installed.wait()
        return listener
    }

    private func endListenQuietly(_ characteristic: CharacteristicIdentifier, listener: UInt64?) {
        guard let listener else { return }
        let ended = BlockingResult<Void>()
        bluejay.removeListen(on: characteristic, listener: listener, privileged: true, deliver: ended.deliver)
        _ = try? ended.wait()
    }

    private func listenLoop(_ characteristic: CharacteristicIdentifier, timeout: Timeout, name: String,
                            before: () throws -> Void, handle: (Data) throws -> ListenAction) throws {
        try check()
        let clock = bluejay.clock
        let deadline = timeout.duration.map { clock.now + $0 }
        let inbox = BlockingInbox<Result<Data, BluejayError>>(clock: clock)
        let listener = try installSynchronousListen(characteristic, inbox: inbox)
        defer { endListenQuietly(characteristic, listener: listener) }
        try before()
        while true {
            guard let next = inbox.take(until: deadline) else {
                throw BluejayError.timedOut(operation: name, after: timeout.duration ?? .zero)
            }
            if try handle(try next.value.get()) == .done { return }
        }
    }
}

extension Bluejay {
    /// Whether the calling thread runs background task `id`.
    func isCurrentBackgroundTask(_ id: UInt64) -> Bool {
        state.withLock { state in
            guard let background = state.background, background.id == id, let thread = background.thread else { return false }
            return pthread_equal(thread, pthread_self()) != 0
        }
    }
}
