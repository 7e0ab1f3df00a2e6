import BluetoothCore
import BluetoothHost

/// Stops a callback registered with a `PeripheralManager`.
public final class PeripheralObservation: Sendable {
    private let task: Task<Void, Never>
    init(_ task: Task<Void, Never>) { self.task = task }
    public func cancel() { task.cancel() }
}

/// The callback forms: each runs the async operation and calls `completion` with its result,
/// on no particular thread.
extension PeripheralManager {
    public nonisolated func powerOn(completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.powerOn() }) }
    }

    public nonisolated func add(_ service: PeripheralService, completion: @escaping @Sendable (Result<GATTPublishedService, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.add(service) }) }
    }

    public nonisolated func remove(_ service: GATTPublishedService, completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.remove(service) }) }
    }

    public nonisolated func removeAllServices(completion: @escaping @Sendable () -> Void) {
        Task {
            await self.removeAllServices()
            completion()
        }
    }

    public nonisolated func startAdvertising(name: String, serviceUUIDs: [BluetoothUUID] = [],
                                             completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.startAdvertising(name: name, serviceUUIDs: serviceUUIDs) }) }
    }

    public nonisolated func startAdvertising(region: BeaconRegion, completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.startAdvertising(region: region) }) }
    }

    public nonisolated func stopAdvertising(completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.stopAdvertising() }) }
    }

    public nonisolated func setValue(_ value: [UInt8], for characteristic: GATTPublishedCharacteristic,
                                     completion: @escaping @Sendable (Result<Void, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.setValue(value, for: characteristic) }) }
    }

    public nonisolated func updateValue(_ value: [UInt8], for characteristic: GATTPublishedCharacteristic,
                                        completion: @escaping @Sendable (Result<ValueUpdateResult, PeripheralError>) -> Void) {
        Task { completion(await Self.result { () async throws(PeripheralError) in try await self.updateValue(value, for: characteristic) }) }
    }

    /// Calls `handler` with every write of the characteristic, to answer with
    /// ``WriteRequest/respond(_:)``; BlueCap's `startRespondingToWriteRequests`.
    public nonisolated func onWriteRequest(for characteristic: GATTPublishedCharacteristic,
                                           _ handler: @escaping @Sendable (WriteRequest) -> Void) {
        router.setWriteConsumer(.callback(handler), valueHandle: characteristic.valueHandle)
    }

    /// Calls `handler` with every subscription change until the observation is cancelled.
    public nonisolated func onSubscriptionChange(_ handler: @escaping @Sendable (SubscriptionChange) -> Void) async -> PeripheralObservation {
        let changes = await subscriptionChanges()
        return PeripheralObservation(Task {
            for await change in changes { handler(change) }
        })
    }

    /// Calls `handler` with every connection event until the observation is cancelled.
    public nonisolated func onConnectionEvent(_ handler: @escaping @Sendable (PeripheralConnectionEvent) -> Void) async -> PeripheralObservation {
        let events = await connectionEvents()
        return PeripheralObservation(Task {
            for await event in events { handler(event) }
        })
    }

    private static func result<T: Sendable>(_ operation: () async throws(PeripheralError) -> T) async -> Result<T, PeripheralError> {
        do {
            return .success(try await operation())
        } catch {
            return .failure(error)
        }
    }
}
