import BluetoothCore

/// Prepare Write and Execute Write (Core 6.0, Vol 3, Part F, 3.4.6): long and reliable
/// writes through the client's prepare queue.
extension GATTServer {
    /// Prepare Write (Vol 3, Part F, 3.4.6.1): the handle and the permissions (with the
    /// link's security and the application's authorization) are checked now, the offset and
    /// the length only when the queue is executed. The response echoes the request.
    func prepareWrite(_ request: ATTPrepareWriteRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.prepareWriteRequest
        guard let attribute = database.attribute(at: request.handle) else { return Self.error(opcode, request.handle, .invalidHandle) }
        if let refusal = await writeRefusal(attribute, kind: .preparedWrite, length: 0, context) {
            return Self.error(opcode, request.handle, refusal)
        }
        guard var client = client(id: context.clientID, connectionHandle: context.connectionHandle) else {
            return Self.error(opcode, request.handle, .unlikelyError)
        }
        let part = PreparedWriteQueue.Part(handle: request.handle, offset: Int(request.offset), value: request.partValue)
        guard client.prepareQueue.prepare(part) else { return Self.error(opcode, request.handle, .prepareQueueFull) }
        clients[context.connectionHandle] = client
        return .prepareWriteResponse(ATTPrepareWriteResponse(echoing: request))
    }

    /// Execute Write (Vol 3, Part F, 3.4.6.3): writes the assembled values in the order
    /// they were prepared, or discards them. The queue is empty afterwards either way; an
    /// error names the handle it is about.
    func executeWrite(_ request: ATTExecuteWriteRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.executeWriteRequest
        guard var client = client(id: context.clientID, connectionHandle: context.connectionHandle) else {
            return Self.error(opcode, 0x0000, .unlikelyError)
        }
        let queue = client.prepareQueue
        client.prepareQueue.clear()
        clients[context.connectionHandle] = client
        guard request.flags == .write, !queue.isEmpty else { return .executeWriteResponse(ATTExecuteWriteResponse()) }

        let configurations = client.configurations
        let assembled = queue.assemble(
            currentValue: { [database] handle in
                guard let attribute = database.attribute(at: handle) else { return [] }
                if case let .clientConfiguration(valueHandle, _) = attribute.kind { return (configurations[valueHandle] ?? []).bytes }
                return attribute.value
            },
            maximumLength: { [database] handle in database.attribute(at: handle)?.maximumLength ?? 0 }
        )
        let values: [(handle: UInt16, value: [UInt8])]
        switch assembled {
        case let .failure(failure): return Self.error(opcode, failure.handle, failure.code)
        case let .success(success): values = success
        }
        for (handle, value) in values {
            guard let attribute = database.attribute(at: handle) else { return Self.error(opcode, handle, .invalidHandle) }
            // Authorized when prepared; the link's security is checked again (Vol 3, Part F, 3.4.6.3).
            if let code = await writeValue(value, to: attribute, kind: .preparedWrite, authorizing: false, context) {
                return Self.error(opcode, handle, code)
            }
        }
        return .executeWriteResponse(ATTExecuteWriteResponse())
    }
}
