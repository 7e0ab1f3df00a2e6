import BluetoothCore
import BluetoothHost
import GATTProfiles

extension PeripheralManager {
    /// Publishes a service and returns its handles; ask it for characteristics with
    /// `GATTPublishedService/characteristic(_:)`. Centrals connected now that asked for
    /// Service Changed are told.
    @discardableResult
    public func add(_ service: PeripheralService) async throws(PeripheralError) -> GATTPublishedService {
        await startPumps()
        let published: GATTPublishedService
        do {
            published = try await backend.server.addService(service.definition(router: router))
        } catch {
            throw .server(error)
        }
        router.publish(published)
        services.append(published)
        for (definition, characteristic) in zip(service.characteristics, published.characteristics) {
            if let profile = definition.profile { profiles[characteristic.valueHandle] = profile }
        }
        do {
            try await servicesDidChange()
        } catch {
            // The backend cannot serve it (BlueZ refused it, or it asks for what BlueZ cannot
            // keep): not published at all, so that a retry does not add it twice.
            try? await backend.server.removeService(published)
            forget(published)
            try? await servicesDidChange()
            throw error
        }
        logger.info("added \(service.name ?? GATTNames.name(forService: service.uuid) ?? service.uuid.description) at \(published.handleRange)")
        return published
    }

    /// Publishes several services in order; stops at the first that fails.
    @discardableResult
    public func add(_ services: [PeripheralService]) async throws(PeripheralError) -> [GATTPublishedService] {
        var published: [GATTPublishedService] = []
        for service in services { published.append(try await add(service)) }
        return published
    }

    /// Removes a published service; its write-request streams end.
    public func remove(_ service: GATTPublishedService) async throws(PeripheralError) {
        do {
            try await backend.server.removeService(service)
        } catch {
            throw .server(error)
        }
        forget(service)
        try await servicesDidChange()
    }

    /// Removes every published service (the GAP and GATT services stay).
    public func removeAllServices() async {
        await backend.server.removeAllServices()
        for service in services { forget(service) }
        try? await servicesDidChange()
    }

    /// Tells the backend (BlueZ registers the application again).
    private func servicesDidChange() async throws(PeripheralError) {
        do {
            try await backend.servicesDidChange()
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    private func forget(_ service: GATTPublishedService) {
        router.unpublish(service)
        services.removeAll { $0.handleRange == service.handleRange }
        for characteristic in service.characteristics { profiles[characteristic.valueHandle] = nil }
    }

    /// The first published characteristic with this UUID, in the given service or any.
    public func characteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> GATTPublishedCharacteristic? {
        for published in services where service == nil || published.uuid == service {
            if let found = published.characteristic(uuid) { return found }
        }
        return nil
    }
}
