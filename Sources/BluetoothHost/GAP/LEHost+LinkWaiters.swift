import BluetoothCore
import BluetoothHCI

/// Whose wait a link layer procedure's completion ends: one connection, one procedure.
struct LinkWaiterKey: Hashable, Sendable {
    var handle: UInt16
    var procedure: LinkProcedure
}

extension LEHost {
    /// Starts a link layer procedure and waits for the controller's report of its end (a PHY
    /// update, a data length update). The waiter is registered before the command goes out:
    /// the completion event can be handled before the task that sent it resumes.
    ///
    /// The wait is bounded by `limit`: when it runs out, `onTimeout` decides (an error, or a
    /// value when silence means "nothing changed"); cancelling the caller ends its wait.
    func awaitLinkChange(_ procedure: LinkProcedure, on connection: Connection, limit: Duration,
                         onTimeout: @escaping @Sendable () -> Result<LinkChange, HostError>,
                         start: @escaping @Sendable () async throws(HostError) -> Void) async throws -> LinkChange {
        guard connection.isConnected else { throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier) }
        let key = LinkWaiterKey(handle: connection.handle, procedure: procedure)
        let id = makeIdentifier()
        let clock = configuration.clock
        let timer = Task.detached { [weak self] in
            do { try await clock.sleep(for: limit) } catch { return }
            await self?.resolveLinkWaiter(key, id: id, with: onTimeout())
        }
        defer { timer.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<LinkChange, any Error>) in
                guard isCurrent(connection) else {
                    continuation.resume(throwing: HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier))
                    return
                }
                links[key.handle]?.linkWaiters[key.procedure, default: [:]][id] = continuation
                Task {
                    do {
                        try await start()
                    } catch {
                        resolveLinkWaiters(key, with: .failure(Self.refusal(HostError.wrap(error), of: procedure)))
                    }
                }
            }
        } onCancel: {
            Task { await self.resolveLinkWaiter(key, id: id, with: .failure(.cancelled)) }
        }
    }

    /// A command error as the caller should see it: a status is the controller's refusal; a
    /// command the controller never answered is the procedure's timeout, said plainly.
    static func refusal(_ error: HostError, of procedure: LinkProcedure) -> HostError {
        switch error {
        case let .hci(.commandFailed(_, status)):
            return .linkProcedureRefused(LinkProcedureRefusal(procedure: procedure, refusedBy: .controller, status: status))
        case let .hci(.commandTimeout(opcode)):
            let name = HCICommandCatalogue.names[opcode] ?? "\(opcode)"
            return .procedureTimeout("\(procedure) (the controller never answered \(name))")
        default:
            return error
        }
    }

    /// Ends every wait for `key`.
    func resolveLinkWaiters(_ key: LinkWaiterKey, with result: Result<LinkChange, HostError>) {
        guard let waiters = links[key.handle]?.linkWaiters.removeValue(forKey: key.procedure) else { return }
        for waiter in waiters.values {
            waiter.resume(with: result.mapError { $0 as any Error })
        }
    }

    /// Ends one wait (its time ran out, or its caller left).
    private func resolveLinkWaiter(_ key: LinkWaiterKey, id: UInt64, with result: Result<LinkChange, HostError>) {
        guard let waiter = links[key.handle]?.linkWaiters[key.procedure]?.removeValue(forKey: id) else { return }
        if links[key.handle]?.linkWaiters[key.procedure]?.isEmpty == true { links[key.handle]?.linkWaiters[key.procedure] = nil }
        waiter.resume(with: result.mapError { $0 as any Error })
    }
}
