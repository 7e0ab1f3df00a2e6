/// An operation the app defines that joins a peripheral's FIFO queue (BleManager's
/// `Operation`): it waits for the requests queued before it, runs alone on the link, and has
/// the same time limit, cancellation and disconnection handling as Bluejay's own reads and
/// writes. Queue it with ``Bluejay/run(_:completion:)``, ``Bluejay/run(_:)`` or
/// ``RemotePeripheral/run(_:)``.
///
/// ```swift
/// struct ReadFirmwareRevision: PeripheralOperation {
///     func start(on peripheral: OperationPeripheral) async throws -> String {
///         try await peripheral.read(from: DeviceInformation.firmwareRevision)
///     }
/// }
/// let revision = try await bluejay.run(ReadFirmwareRevision())
/// ```
///
/// Its end, whichever comes first:
/// - ``start(on:)`` returns or throws: that is the outcome;
/// - the time limit passes (``timeout``, else the operation time limit):
///   ``BluejayError/timedOut(operation:after:)``;
/// - the caller cancels (the `async` caller's task, ``Bluejay/cancelEverything(shouldDisconnect:)``):
///   ``BluejayError/cancelled``;
/// - the link drops: ``BluejayError/disconnected(_:reason:)``.
///
/// In the last three the outcome is reported at once, ``abort(because:)`` is called, the task
/// running ``start(on:)`` is cancelled and the GATT requests it waits for let go; the next
/// operation starts only when ``start(on:)`` has returned, so two operations never run together.
public protocol PeripheralOperation: Sendable {
    /// What the operation produces.
    associatedtype Output: Sendable

    /// The name in the log and in errors (the default: the type's name).
    var name: String { get }

    /// The operation's time limit, from its start: `nil` (the default) for the operation time
    /// limit of ``StartOptions``, ``Timeout/none`` for none.
    var timeout: Timeout? { get }

    /// Runs the operation on the peripheral once its turn has come. Requests made through
    /// `peripheral` run at once (the operation holds the queue); requests made through
    /// ``Bluejay`` or ``RemotePeripheral`` would wait behind it.
    func start(on peripheral: OperationPeripheral) async throws -> Output

    /// The operation was ended from outside while it runs (timed out, cancelled, disconnected):
    /// let go of whatever it waits for that is not a request on `peripheral` (those end by
    /// themselves). Called once, on any thread. The default does nothing.
    func abort(because error: BluejayError)
}

extension PeripheralOperation {
    public var name: String { String(describing: Self.self) }
    public var timeout: Timeout? { nil }
    public func abort(because error: BluejayError) {}
}
