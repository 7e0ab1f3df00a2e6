import BluetoothCore
import BluetoothHost
import GATTProfiles

extension PeripheralManager {
    /// Sets a characteristic's value without telling subscribers; reads return it.
    public func setValue(_ value: [UInt8], for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) {
        do {
            try await backend.server.setValue(value, forHandle: characteristic.valueHandle)
        } catch {
            throw .server(error)
        }
    }

    /// A characteristic's stored value.
    public func value(of characteristic: GATTPublishedCharacteristic) async -> [UInt8]? {
        await backend.server.value(forHandle: characteristic.valueHandle)
    }

    /// Sets a characteristic's value and pushes it to every subscribed central (an
    /// indication to those that asked for indications, else a notification). The result
    /// tells who got it, and why not everyone did: no subscribers, full queues (then wait
    /// for ``PeripheralConnectionEvent/readyToUpdateSubscribers(_:)``), or centrals whose
    /// link's security does not allow the value now (``ValueUpdateResult/withheld``: the
    /// characteristic's read security protects pushed values too, checked as each leaves).
    /// Bonded centrals subscribed and away get it when they come back where they asked for
    /// indications, or the characteristic notifies its latest value on reconnection
    /// (``ValueUpdateResult/deferred``).
    @discardableResult
    public func updateValue(_ value: [UInt8], for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        guard !characteristic.properties.isDisjoint(with: [.notify, .indicate]) else {
            throw .server(.notPermitted("characteristic \(characteristic.uuid) neither notifies nor indicates"))
        }
        let update: GATTValueUpdate
        do {
            update = try await backend.pushValue(value, forHandle: characteristic.valueHandle)
        } catch {
            throw .server(error)
        }
        if !update.hasSubscribers { return ValueUpdateResult(delivered: [], shortfall: .noSubscribers, deferred: update.deferred) }
        let centrals = await centrals(for: update.notified + update.indicated)
        let withheld = zip(await self.centrals(for: update.withheld.map(\.connectionHandle)), update.withheld).map {
            ValueUpdateResult.Withheld(central: $0, reason: $1.reason)
        }
        let shortfall: ValueUpdateResult.Shortfall? = update.queueFull.isEmpty ? nil : .queueFull(await self.centrals(for: update.queueFull))
        return ValueUpdateResult(delivered: centrals, shortfall: shortfall, withheld: withheld, deferred: update.deferred)
    }

    /// Updates with text fields, converted by the characteristic's profile.
    @discardableResult
    public func updateValue(stringValue: [String: String], for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        guard let profile = profiles[characteristic.valueHandle] else { throw .noProfile(characteristic.uuid) }
        guard let bytes = profile.bytes(stringValue: stringValue) else { throw .invalidStringValue(characteristic.uuid, stringValue) }
        return try await updateValue(bytes, for: characteristic)
    }

    @discardableResult
    public func updateValue<T: Deserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    @discardableResult
    public func updateValue<T: RawDeserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    @discardableResult
    public func updateValue<T: RawArrayDeserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    @discardableResult
    public func updateValue<T: RawPairDeserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    @discardableResult
    public func updateValue<T: RawArrayPairDeserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    @discardableResult
    public func updateValue<T: BytesDeserializable>(_ value: T, for characteristic: GATTPublishedCharacteristic) async throws(PeripheralError) -> ValueUpdateResult {
        try await updateValue(value.serialize(), for: characteristic)
    }

    /// The centrals subscribed to a characteristic.
    public func subscribers(of characteristic: GATTPublishedCharacteristic) async -> [Central] {
        await backend.subscriptions(forHandle: characteristic.valueHandle).map {
            Central(connectionHandle: $0.connectionHandle, overTheAir: $0.peer, resolver: backend.addressResolver)
        }
    }

    /// The centrals on these connections, with their addresses when the host knows them.
    private func centrals(for handles: [UInt16]) async -> [Central] {
        let connected = await backend.connectedCentrals()
        return handles.map { handle in
            Central(connectionHandle: handle, address: connected.first { $0.handle == handle }?.address)
        }
    }
}
