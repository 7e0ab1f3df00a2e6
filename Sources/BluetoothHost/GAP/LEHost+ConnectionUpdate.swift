import BluetoothCore
import BluetoothHCI

extension LEHost {
    func readRSSI(_ connection: Connection) async throws -> Int8 {
        guard connection.isConnected else { throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier) }
        return try await send(ReadRSSICommand(connectionHandle: connection.handle)).rssi
    }

    /// Changes the connection parameters and returns the ones that apply afterwards.
    /// As the central the controller runs the Connection Update procedure; as the peripheral
    /// the host asks the central through L2CAP (Core 6.0, Vol 3, Part A, 4.20).
    ///
    /// Throws ``HostError/procedureTimeout(_:)`` when the update has not completed within
    /// ``HostConfiguration/linkProcedureTimeout``; cancelling the caller stops its wait.
    func updateParameters(_ connection: Connection, intervalRange: ClosedRange<UInt16>, peripheralLatency: UInt16,
                          supervisionTimeout: UInt16) async throws -> ConnectionParameters {
        let request = L2CAPConnectionParameterUpdateRequest(
            intervalMin: intervalRange.lowerBound, intervalMax: intervalRange.upperBound,
            peripheralLatency: peripheralLatency, timeoutMultiplier: supervisionTimeout)
        let violations = request.violations
        guard violations.isEmpty else {
            throw HostError.invalidArgument(violations.map(\.description).joined(separator: "; "))
        }
        guard connection.isConnected else { throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier) }
        let handle = connection.handle
        let id = makeIdentifier()
        let (clock, limit) = (configuration.clock, configuration.linkProcedureTimeout)
        let timer = Task.detached { [weak self] in
            do { try await clock.sleep(for: limit) } catch { return }
            await self?.failParameterUpdate(handle: handle, id: id, error: .procedureTimeout("the connection parameter update"))
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            // The waiter is registered before the request goes out: the completion event can be
            // handled before the task that sent the command resumes.
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ConnectionParameters, any Error>) in
                guard isCurrent(connection) else {
                    continuation.resume(throwing: HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
                    return
                }
                links[handle]?.parameterUpdateWaiters[id] = continuation
                Task {
                    do {
                        if connection.role == .central {
                            _ = try await send(LEConnectionUpdateCommand(
                                connectionHandle: handle, connectionIntervalMin: intervalRange.lowerBound,
                                connectionIntervalMax: intervalRange.upperBound, maxLatency: peripheralLatency,
                                supervisionTimeout: supervisionTimeout))
                        } else {
                            sendSignaling(.connectionParameterUpdateRequest(request), on: connection)
                        }
                    } catch {
                        failParameterUpdates(handle: handle, error: Self.refusal(HostError.wrap(error), of: .connectionParameterUpdate))
                    }
                }
            }
        } onCancel: {
            Task { await self.failParameterUpdate(handle: handle, id: id, error: .cancelled) }
        }
    }

    /// Fails every waiting parameter update of a connection.
    func failParameterUpdates(handle: UInt16, error: HostError) {
        let waiters = links[handle]?.parameterUpdateWaiters ?? [:]
        links[handle]?.parameterUpdateWaiters = [:]
        for waiter in waiters.values { waiter.resume(throwing: error) }
    }

    /// Fails one waiting parameter update (its time ran out, or its caller left).
    private func failParameterUpdate(handle: UInt16, id: UInt64, error: HostError) {
        guard let waiter = links[handle]?.parameterUpdateWaiters.removeValue(forKey: id) else { return }
        waiter.resume(throwing: error)
    }

    func didUpdateConnection(_ event: LEConnectionUpdateCompleteEvent) {
        peerParameterUpdateDidComplete(handle: event.connectionHandle)
        let waiters = (links[event.connectionHandle]?.parameterUpdateWaiters ?? [:]).values
        links[event.connectionHandle]?.parameterUpdateWaiters = [:]
        guard event.status.isSuccess else {
            let refusal = LinkProcedureRefusal(procedure: .connectionParameterUpdate, refusedBy: .peer, status: event.status)
            waiters.forEach { $0.resume(throwing: HostError.linkProcedureRefused(refusal)) }
            return
        }
        let parameters = ConnectionParameters(interval: event.connectionInterval, peripheralLatency: event.peripheralLatency,
                                              supervisionTimeout: event.supervisionTimeout)
        if let connection = connection(event.connectionHandle), connection.update(parameters: parameters) {
            connection.linkChanges.yield(.parameters(parameters))
        }
        logger.debug("connection \(Hex.format(event.connectionHandle)) parameters now \(parameters)")
        waiters.forEach { $0.resume(returning: parameters) }
    }

    // MARK: The peripheral's requests (as the central)

    /// A peripheral asked for new parameters through L2CAP and they were accepted: the update
    /// runs now, or after the one in progress. At most one runs per connection and only the
    /// newest request waits behind it, so a peer that floods requests costs no more.
    func applyPeerParameterUpdate(_ request: L2CAPConnectionParameterUpdateRequest, handle: UInt16) {
        guard links[handle] != nil else { return }
        guard links[handle]?.peerParameterUpdate == nil else {
            links[handle]?.peerParameterUpdate = .init(next: request)
            return
        }
        links[handle]?.peerParameterUpdate = .init(next: nil)
        Task {
            do {
                _ = try await send(LEConnectionUpdateCommand(
                    connectionHandle: handle, connectionIntervalMin: request.intervalMin, connectionIntervalMax: request.intervalMax,
                    maxLatency: request.peripheralLatency, supervisionTimeout: request.timeoutMultiplier))
            } catch {
                // Refused: no completion event will come.
                peerParameterUpdateDidComplete(handle: handle)
            }
        }
    }

    /// The update in progress for a peer's request ended: the newest request waiting, if any, runs.
    private func peerParameterUpdateDidComplete(handle: UInt16) {
        guard let pending = links[handle]?.peerParameterUpdate else { return }
        links[handle]?.peerParameterUpdate = nil
        if let next = pending.next { applyPeerParameterUpdate(next, handle: handle) }
    }

    /// The peer asked the link layer for new parameters (Core 6.0, Vol 4, Part E, 7.7.65.6):
    /// accept what the specification allows.
    func answer(_ request: LERemoteConnectionParameterRequestEvent) {
        let proposal = L2CAPConnectionParameterUpdateRequest(
            intervalMin: request.intervalMin, intervalMax: request.intervalMax,
            peripheralLatency: request.maxLatency, timeoutMultiplier: request.timeout)
        let handle = request.connectionHandle
        Task {
            if proposal.violations.isEmpty {
                _ = try? await send(LERemoteConnectionParameterRequestReplyCommand(
                    connectionHandle: handle, intervalMin: request.intervalMin, intervalMax: request.intervalMax,
                    maxLatency: request.maxLatency, timeout: request.timeout))
            } else {
                _ = try? await send(LERemoteConnectionParameterRequestNegativeReplyCommand(
                    connectionHandle: handle, reason: .unacceptableConnectionParameters))
            }
        }
    }
}

/// A connection parameter update run for a peripheral's request: the newest request that came
/// while it ran, to run next.
struct PeerParameterUpdate: Sendable {
    var next: L2CAPConnectionParameterUpdateRequest?
}
