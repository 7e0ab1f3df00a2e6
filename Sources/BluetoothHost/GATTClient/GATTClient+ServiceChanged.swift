import BluetoothCore

extension GATTClient {
    /// Finds the peer's Service Changed characteristic and enables its indications
    /// (Core 6.0, Vol 3, Part G, 7.1). Returns `false` when the peer has none (its database
    /// never changes). Changes are then reported by ``serviceChanges()``.
    @discardableResult
    public func enableServiceChangedIndications() async throws -> Bool {
        if state.withLock({ $0.serviceChangedValueHandle }) != nil { return true }
        guard let gattService = try await discoverPrimaryServices(uuid: GATTAttributeType.gattService).first,
              let characteristic = try await discoverCharacteristics(of: gattService, uuid: GATTAttributeType.serviceChanged).first else {
            return false
        }
        let descriptors = try await discoverDescriptors(of: characteristic)
        guard let cccd = descriptors.first(where: { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }) else {
            return false
        }
        let valueHandle = characteristic.valueHandle
        let listeners = serviceChangeListeners
        let sink = NotificationSink(deliver: { [weak self] values in
            for value in values { self?.didReceiveServiceChanged(value.value) }
        }, finish: { _ in listeners.finish() })
        // Watching before the descriptor is written: the first indication may follow at once.
        try bearer.addSubscriber(sink, valueHandle: valueHandle)
        state.withLock { state in
            state.serviceChangedValueHandle = valueHandle
            state.serviceChangedSink = sink
        }
        do {
            try await writeValue(ClientCharacteristicConfiguration.indication.bytes, handle: cccd.handle)
        } catch {
            bearer.removeSubscriber(sink, valueHandle: valueHandle)
            state.withLock { state in
                state.serviceChangedValueHandle = nil
                state.serviceChangedSink = nil
            }
            throw error
        }
        state.withLock { $0.subscriptionConfigurations[valueHandle] = SubscriptionConfiguration(descriptorHandle: cccd.handle, value: .indication) }
        return true
    }

    /// Changes to the peer's database, as Service Changed indications report them.
    public func serviceChanges() -> AsyncStream<GATTServiceChange> {
        serviceChangeListeners.makeStream()
    }

    /// The services discovered so far that are still valid.
    public var cachedServices: [GATTService] { state.withLock { $0.discoveredServices } }

    /// The Service Changed value is the affected handle range (start, end), little-endian.
    func didReceiveServiceChanged(_ value: ArraySlice<UInt8>) {
        var reader = ByteReader(value, context: "Service Changed")
        guard let start = try? reader.readUInt16(), let end = try? reader.readUInt16(), start <= end else {
            logger.warning("malformed Service Changed value ignored")
            return
        }
        let affected = start...end
        let invalidated = state.withLock { state in
            defer { state.discoveredServices.removeAll { $0.handleRange.overlaps(affected) } }
            return state.discoveredServices.filter { $0.handleRange.overlaps(affected) }
        }
        logger.info("peer database changed in \(Hex.format(start))-\(Hex.format(end)); \(invalidated.count) service(s) invalidated")
        if state.withLock({ $0.knownDatabase != nil }) {
            // The cached database as a whole is no longer known to be the peer's: discovery
            // goes over the air again (and the host caches what it finds next).
            databaseWentStale(because: "Service Changed \(Hex.format(start))-\(Hex.format(end))")
        }
        let change = GATTServiceChange(affectedHandles: affected, invalidatedServices: invalidated)
        serviceChangeListeners.yield(change)
    }
}
