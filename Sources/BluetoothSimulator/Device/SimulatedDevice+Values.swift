import BluetoothCore
import BluetoothHost
import BluetoothPeripheral

extension SimulatedDevice {
    /// How long a push waits for a full notification queue to drain.
    static let queueDrainTimeout: Duration = .seconds(10)

    /// A characteristic's stored value.
    public func value(of characteristic: BluetoothUUID, inService service: BluetoothUUID? = nil) async -> [UInt8]? {
        guard let published = lookup(characteristic, inService: service) else { return nil }
        return await manager.value(of: published.characteristic)
    }

    /// Sets a characteristic's value without telling subscribers; reads return it.
    public func setValue(_ value: [UInt8], of characteristic: BluetoothUUID, inService service: BluetoothUUID? = nil) async throws(SimulatorError) {
        let published = try require(characteristic, inService: service)
        do {
            try await manager.setValue(value, for: published.characteristic)
        } catch {
            throw .peripheral(error)
        }
    }

    /// Sets a characteristic's value and pushes it to every subscribed central (an
    /// indication to those that asked for indications, else a notification), waiting while
    /// a central's queue is full. Returns the centrals that got it.
    @discardableResult
    public func notify(_ value: [UInt8], on characteristic: BluetoothUUID, inService service: BluetoothUUID? = nil) async throws(SimulatorError) -> [Central] {
        let published = try require(characteristic, inService: service)
        let epochs = Dictionary(uniqueKeysWithValues: connectedCentrals.map { ($0.connectionHandle, readiness.epoch(of: $0.connectionHandle)) })
        let result: ValueUpdateResult
        do {
            result = try await manager.updateValue(value, for: published.characteristic)
        } catch {
            throw .peripheral(error)
        }
        var delivered = result.delivered
        if case let .queueFull(full)? = result.shortfall {
            for central in full {
                let epoch = epochs[central.connectionHandle] ?? 0
                guard await readiness.wait(for: central.connectionHandle, after: epoch, timeout: Self.queueDrainTimeout) else {
                    throw .timedOut("the notification queue of \(central) did not drain")
                }
                do {
                    try await push(value, to: central, published: published.characteristic)
                    delivered.append(central)
                } catch SimulatorError.notConnected {
                    continue
                }
            }
        }
        return delivered
    }

    /// Pushes a value to one central without storing it (a notification, or an indication
    /// if that is what the central asked for), waiting while its queue is full.
    /// - Throws: ``SimulatorError/notSubscribed(_:_:)`` when it did not subscribe,
    ///   ``SimulatorError/notConnected(_:)`` when it is gone.
    public func notify(_ value: [UInt8], on characteristic: BluetoothUUID, to central: Central,
                       inService service: BluetoothUUID? = nil) async throws(SimulatorError) {
        let published = try require(characteristic, inService: service)
        try await push(value, to: central, published: published.characteristic)
    }

    /// The centrals subscribed to a characteristic now.
    public func subscribers(of characteristic: BluetoothUUID, inService service: BluetoothUUID? = nil) async -> [Central] {
        guard let published = lookup(characteristic, inService: service) else { return [] }
        return await manager.subscribers(of: published.characteristic)
    }

    /// The ATT MTU of a central's connection.
    public func mtu(of central: Central) async -> Int {
        Int(await host.server.mtu(connectionHandle: central.connectionHandle))
    }

    private func push(_ value: [UInt8], to central: Central, published: GATTPublishedCharacteristic) async throws(SimulatorError) {
        let server = await host.server
        let handle = central.connectionHandle
        while true {
            guard !isStopped else { throw .stopped }
            let subscription = await server.subscriptions(forHandle: published.valueHandle).first { $0.connectionHandle == handle }
            guard let subscription else {
                if connectedCentrals.contains(where: { $0.connectionHandle == handle }) {
                    throw .notSubscribed(published.uuid, central)
                }
                throw .notConnected(central)
            }
            let epoch = readiness.epoch(of: handle)
            do {
                if subscription.isIndicating {
                    try await server.indicate(value, forHandle: published.valueHandle, connectionHandle: handle)
                } else {
                    try await server.notify(value, forHandle: published.valueHandle, connectionHandle: handle)
                }
                return
            } catch GATTServerError.queueFull {
                guard await readiness.wait(for: handle, after: epoch, timeout: Self.queueDrainTimeout) else {
                    throw .timedOut("the notification queue of \(central) did not drain")
                }
            } catch GATTServerError.notConnected {
                throw .notConnected(central)
            } catch {
                throw .peripheral(.server(error))
            }
        }
    }

    private func require(_ characteristic: BluetoothUUID, inService service: BluetoothUUID?) throws(SimulatorError) -> Published {
        guard let published = lookup(characteristic, inService: service) else { throw .unknownCharacteristic(characteristic) }
        return published
    }
}
