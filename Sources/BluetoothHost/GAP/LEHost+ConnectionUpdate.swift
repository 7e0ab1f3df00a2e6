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
        // The waiter is registered before the request goes out: the completion event can be
        // handled before the task that sent the command resumes.
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ConnectionParameters, any Error>) in
            parameterUpdateWaiters[handle, default: []].append(continuation)
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
                    failParameterUpdate(handle: handle, error: HostError.wrap(error))
                }
            }
        }
    }

    func failParameterUpdate(handle: UInt16, error: HostError) {
        for waiter in parameterUpdateWaiters.removeValue(forKey: handle) ?? [] {
            waiter.resume(throwing: error)
        }
    }

    func didUpdateConnection(_ event: LEConnectionUpdateCompleteEvent) {
        let waiters = parameterUpdateWaiters.removeValue(forKey: event.connectionHandle) ?? []
        guard event.status.isSuccess else {
            waiters.forEach { $0.resume(throwing: HostError.hci(.commandFailed(LEConnectionUpdateCommand.opcode, event.status))) }
            return
        }
        let parameters = ConnectionParameters(interval: event.connectionInterval, peripheralLatency: event.peripheralLatency,
                                              supervisionTimeout: event.supervisionTimeout)
        connectionsByHandle[event.connectionHandle]?.update(parameters: parameters)
        logger.debug("connection \(Hex.format(event.connectionHandle)) parameters now \(parameters)")
        waiters.forEach { $0.resume(returning: parameters) }
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
