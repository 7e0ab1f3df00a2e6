import BluetoothCore

/// Publishing services and managing values (the application side of the server).
extension GATTServer {
    /// Publishes a service after the last attribute and returns its handles. Clients
    /// connected now that enabled Service Changed indications are told the new handle range
    /// (Core 6.0, Vol 3, Part G, 7.1).
    @discardableResult
    public func addService(_ definition: GATTServiceDefinition) throws(GATTServerError) -> GATTPublishedService {
        let published = try database.add(definition)
        logger.info("published \(published)")
        indicateServiceChanged(published.handleRange)
        return published
    }

    /// Removes a published service; Service Changed tells connected clients its range.
    public func removeService(_ service: GATTPublishedService) throws(GATTServerError) {
        try removeService(startingAt: service.handleRange.lowerBound)
    }

    /// Removes the service whose declaration is at `handle`.
    public func removeService(startingAt handle: UInt16) throws(GATTServerError) {
        let removed = try database.removeService(at: handle)
        logger.info("removed \(removed)")
        forgetConfigurations(in: removed.handleRange)
        indicateServiceChanged(removed.handleRange)
    }

    /// Removes every service the application added (the GAP and GATT services stay), with
    /// one Service Changed indication covering them all.
    public func removeAllServices() {
        let services = database.applicationServices
        guard let first = services.first, let last = services.last else { return }
        for service in services.reversed() { _ = try? database.removeService(at: service.handleRange.lowerBound) }
        let range = first.handleRange.lowerBound...last.handleRange.upperBound
        forgetConfigurations(in: range)
        indicateServiceChanged(range)
    }

    /// Every published service in handle order, the GAP and GATT services first.
    public var services: [GATTPublishedService] { database.services }

    /// The stored value of a characteristic or descriptor (a read handler's answer is not
    /// stored); `nil` for an unknown handle.
    public func value(forHandle handle: UInt16) -> [UInt8]? {
        database.attribute(at: handle)?.value
    }

    /// Stores a characteristic's or descriptor's value without telling subscribers; see
    /// ``updateValue(_:forHandle:connectionHandles:)`` to push it.
    public func setValue(_ value: [UInt8], forHandle handle: UInt16) throws(GATTServerError) {
        guard let attribute = database.attribute(at: handle) else { throw .unknownAttribute(handle) }
        switch attribute.kind {
        case .value, .descriptor: break
        default: throw .unknownAttribute(handle)
        }
        guard value.count <= attribute.maximumLength else { throw .valueTooLong(length: value.count, maximum: attribute.maximumLength) }
        database.setValue(value, at: handle)
    }

    /// The GAP Device Name (Core 6.0, Vol 3, Part C, 12.1), cut to 248 octets of UTF-8.
    public var deviceName: String {
        String(decoding: database.attribute(at: AttributeDatabase.deviceNameHandle)?.value ?? [], as: UTF8.self)
    }

    public func setDeviceName(_ name: String) {
        database.setValue(AttributeDatabase.deviceNameBytes(name), at: AttributeDatabase.deviceNameHandle)
    }

    /// The GAP Appearance (Core 6.0, Vol 3, Part C, 12.2; values in Assigned Numbers 2.6).
    public func setAppearance(_ appearance: UInt16) {
        database.setValue(AttributeDatabase.appearanceBytes(appearance), at: AttributeDatabase.appearanceHandle)
    }

    /// The handle of the Service Changed characteristic value.
    public nonisolated var serviceChangedHandle: UInt16 { AttributeDatabase.serviceChangedHandle }

    /// Drops the Client Characteristic Configurations of characteristics that are gone, the
    /// connected clients' and those kept for bonded clients (with what waited for them).
    private func forgetConfigurations(in range: ClosedRange<UInt16>) {
        for (key, client) in clients {
            var updated = client
            updated.configurations = client.configurations.filter { !range.contains($0.key) }
            clients[key] = updated
        }
        forgetBondedClientHandles(in: range)
    }

    /// Makes every client change-unaware, then indicates Service Changed with the affected
    /// range to every client that enabled it.
    private func indicateServiceChanged(_ range: ClosedRange<UInt16>) {
        databaseDidChange()
        var writer = ByteWriter(capacity: 4)
        writer.write(range.lowerBound)
        writer.write(range.upperBound)
        database.setValue(writer.bytes, at: AttributeDatabase.serviceChangedHandle)
        let handle = AttributeDatabase.serviceChangedHandle
        for client in clients.values.sorted(by: { $0.connectionHandle < $1.connectionHandle })
        where client.configurations[handle]?.contains(.indication) == true {
            if enqueueIndication(writer.bytes, valueHandle: handle, connectionHandle: client.connectionHandle, ticket: nil) != .sent {
                logger.warning("could not indicate Service Changed to connection \(client.connectionHandle)")
            }
        }
    }
}
