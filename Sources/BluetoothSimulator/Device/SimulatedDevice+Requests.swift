import BluetoothCore
import BluetoothHost
import BluetoothPeripheral

extension SimulatedDevice {
    /// Publishes the declared services and routes every read and write of their
    /// characteristics through ``handleRead(_:of:)`` and ``handleWrite(_:of:)``.
    func publishServices() async throws(SimulatorError) {
        for service in declaration.services {
            let published: GATTPublishedService
            do {
                published = try await manager.add(PeripheralService(definition: service.definition))
            } catch {
                throw .invalidDeclaration("service \(service.uuid) cannot be published: \(error)")
            }
            for (declared, characteristic) in zip(service.characteristics, published.characteristics) {
                state.withLock { $0.published.append(Published(service: service.uuid, characteristic: characteristic, declared: declared)) }
                if declared.isReadable {
                    await manager.setReadHandler(for: characteristic) { [weak self] request in
                        guard let self else { return .error(.unlikelyError) }
                        return await self.handleRead(request, of: declared)
                    }
                }
                if declared.isWritable {
                    let requests = await manager.writeRequests(for: characteristic)
                    // One write at a time per characteristic, in the order they arrived.
                    own(Task { [weak self] in
                        for await request in requests {
                            guard let self else {
                                request.respond(.error(.unlikelyError))
                                continue
                            }
                            request.respond(await self.handleWrite(request, of: declared))
                        }
                    })
                }
            }
        }
    }

    /// The published characteristic with this UUID (in the given service, or the first).
    public func publishedCharacteristic(_ uuid: BluetoothUUID, inService service: BluetoothUUID? = nil) -> GATTPublishedCharacteristic? {
        lookup(uuid, inService: service)?.characteristic
    }

    func lookup(_ uuid: BluetoothUUID, inService service: BluetoothUUID?) -> Published? {
        state.withLock { state in
            state.published.first { $0.characteristic.uuid == uuid && (service == nil || $0.service == service) }
        }
    }

    /// What a request becomes once delays and injected failures are applied.
    private enum Disposition {
        case proceed
        case refuse(ATTErrorCode)
    }

    private func handleRead(_ request: ReadRequest, of declared: SimulatedCharacteristic) async -> GATTReadResponse {
        let response = await answerRead(request, of: declared)
        emit(.read(request.central, characteristic: declared.uuid, response: response))
        return response
    }

    private func answerRead(_ request: ReadRequest, of declared: SimulatedCharacteristic) async -> GATTReadResponse {
        if case let .refuse(code) = await dispose(declared.uuid, kind: .read, central: request.central) { return .error(code) }
        let stored = await manager.value(of: request.characteristic) ?? []
        guard let onRead = declared.onRead else { return .value(stored) }
        return await onRead(SimulatedRead(central: request.central, characteristic: declared.uuid, offset: request.offset,
                                          storedValue: stored, device: self))
    }

    private func handleWrite(_ request: WriteRequest, of declared: SimulatedCharacteristic) async -> GATTWriteResponse {
        let response = await answerWrite(request, of: declared)
        emit(.written(request.central, characteristic: declared.uuid, value: request.value, kind: request.kind, response: response))
        return response
    }

    private func answerWrite(_ request: WriteRequest, of declared: SimulatedCharacteristic) async -> GATTWriteResponse {
        if case let .refuse(code) = await dispose(declared.uuid, kind: .write, central: request.central) { return .error(code) }
        guard let onWrite = declared.onWrite else { return .success }
        let stored = await manager.value(of: request.characteristic) ?? []
        return await onWrite(SimulatedWrite(central: request.central, characteristic: declared.uuid, value: request.value,
                                            kind: request.kind, storedValue: stored, device: self))
    }

    /// Waits the response delay, then applies the first injected failure that matches.
    private func dispose(_ uuid: BluetoothUUID, kind: SimulatedRequestKinds, central: Central) async -> Disposition {
        let (delay, failure) = state.withLock { state in
            (state.delays[uuid] ?? state.defaultDelay, state.failures.take(characteristic: uuid, kind: kind))
        }
        if delay > .zero { try? await clock.sleep(for: delay) }
        guard let failure else { return .proceed }
        logger.info("\(uuid): injected failure: \(failure)")
        emit(.failureInjected(failure, characteristic: uuid))
        switch failure {
        case let .attError(code):
            return .refuse(code)
        case let .dropLink(reason):
            await drop(connectionHandle: central.connectionHandle, reason: reason)
            // Never delivered: the link is gone.
            return .refuse(.unlikelyError)
        case let .delay(extra):
            try? await clock.sleep(for: extra)
            return .proceed
        }
    }
}
