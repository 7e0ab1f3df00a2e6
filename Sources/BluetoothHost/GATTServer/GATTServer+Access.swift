import BluetoothCore

/// Reading and writing one attribute value for a client, with the permission checks of
/// Core 6.0, Vol 3, Part F, 3.2.5 and the application's handlers.
extension GATTServer {
    /// Why the client may not read the attribute, short of authorization, if it may not:
    /// the read permission, then the link's encryption, authentication and key size
    /// (Core 6.0, Vol 3, Part F, 4 and Part C, 10.3.1).
    func readSecurityRefusal(_ attribute: ServerAttribute, _ context: RequestContext) -> ATTErrorCode? {
        guard attribute.permissions.allowsReading else { return .readNotPermitted }
        if context.linkCheckedByStack { return nil }
        return attribute.readRequirement.refusal(on: context.security, peerHasKey: hasKey(for: context))
    }

    /// Why the client may not read the attribute, if it may not: ``readSecurityRefusal(_:_:)``,
    /// then the application's authorization.
    func readRefusal(_ attribute: ServerAttribute, _ context: RequestContext) async -> ATTErrorCode? {
        if let refusal = readSecurityRefusal(attribute, context) { return refusal }
        if attribute.readRequirement.authorization { return await authorize(attribute, access: .read, context) }
        return nil
    }

    /// Why the client may not write `length` octets to the attribute with a write of `kind`,
    /// if it may not. A characteristic value takes only the writes its properties declare
    /// (Core 6.0, Vol 3, Part G, 3.3.1.1): Write Request and prepared writes need Write, a
    /// Write Command needs Write Without Response (or, on an encrypted link, Authenticated
    /// Signed Writes), a Signed Write Command Authenticated Signed Writes. Then the link's
    /// security (for a Client Characteristic Configuration, also what a read of its value
    /// needs), the application's authorization (for a Client Characteristic Configuration, also
    /// asked as for a read of the value; not asked when `authorizing` is `false`: an executed
    /// prepared write was authorized when it was prepared) and last the length, so that a
    /// client learns nothing of a value it may not write.
    func writeRefusal(_ attribute: ServerAttribute, kind: GATTWriteRequest.Kind, length: Int, authorizing: Bool = true,
                      _ context: RequestContext) async -> ATTErrorCode? {
        guard attribute.permissions.allowsWriting else { return .writeNotPermitted }
        if case let .value(properties) = attribute.kind {
            let declared: CharacteristicProperties
            switch kind {
            // A client sends a Write Command where it would sign, once the link is encrypted
            // (Core 6.0, Vol 3, Part C, 10.2.2): Authenticated Signed Writes admits it then.
            case .command: declared = context.security.isEncrypted ? [.writeWithoutResponse, .authenticatedSignedWrites] : .writeWithoutResponse
            case .signedCommand: declared = .authenticatedSignedWrites
            case .request, .preparedWrite: declared = .write
            }
            guard !properties.isDisjoint(with: declared) else { return .writeNotPermitted }
        }
        let requirement = attribute.writeRequirement
        if !context.linkCheckedByStack, let refusal = requirement.refusal(on: context.security, peerHasKey: hasKey(for: context)) {
            return refusal
        }
        // Subscribing is reading every later value: a Client Characteristic Configuration write
        // needs what a read of its characteristic's value needs too (Core 6.0, Vol 3, Part C,
        // 10.3.1), link and authorization, whatever the descriptor's own permissions.
        let value = subscribedValue(of: attribute)
        if let value, !context.linkCheckedByStack,
           let refusal = value.readRequirement.refusal(on: context.security, peerHasKey: hasKey(for: context)) { return refusal }
        if authorizing, requirement.authorization, let refusal = await authorize(attribute, access: .write, context) { return refusal }
        if authorizing, let value, value.readRequirement.authorization, let refusal = await authorize(value, access: .read, context) {
            return refusal
        }
        guard length <= attribute.maximumLength else { return .invalidAttributeValueLength }
        return nil
    }

    /// The characteristic value a Client Characteristic Configuration descriptor subscribes to.
    private func subscribedValue(of attribute: ServerAttribute) -> ServerAttribute? {
        guard case let .clientConfiguration(valueHandle, _) = attribute.kind else { return nil }
        return database.attribute(at: valueHandle)
    }

    /// The attribute's value as this client sees it: its own Client Characteristic
    /// Configuration, the read handler's answer, or the stored value.
    func readValue(of attribute: ServerAttribute, offset: Int = 0, _ context: RequestContext) async -> GATTReadResponse {
        if let refusal = await readRefusal(attribute, context) { return .error(refusal) }
        if case let .clientConfiguration(valueHandle, _) = attribute.kind {
            return .value(clientConfiguration(of: valueHandle, context).bytes)
        }
        switch attribute.handle {
        case AttributeDatabase.clientSupportedFeaturesHandle: return .value(clientFeatures(context))
        case AttributeDatabase.databaseHashHandle:
            didServeDatabaseHash(context)
            return .value(database.hash.bytes)
        default: break
        }
        guard let onRead = attribute.onRead else { return .value(attribute.value) }
        let request = GATTReadRequest(connectionHandle: context.connectionHandle, peer: context.peer, handle: attribute.handle,
                                      uuid: attribute.type, offset: offset)
        guard let answer = await HandlerDeadline.run(timeout: settings.handlerTimeout, clock: clock, { await onRead(request) }) else {
            logger.warning("read handler of \(attribute.type) did not answer within \(settings.handlerTimeout)")
            return .error(.unlikelyError)
        }
        if case let .value(value) = answer, value.count > GATTCharacteristicDefinition.maximumAttributeValueLength {
            return .value(Array(value.prefix(GATTCharacteristicDefinition.maximumAttributeValueLength)))
        }
        return answer
    }

    /// Writes a value for a client: a Client Characteristic Configuration for this client
    /// alone, else through the write handler, and stores it when accepted. Returns the error
    /// to answer, or `nil` on success.
    /// `authorizing` as for ``writeRefusal(_:kind:length:authorizing:_:)``.
    func writeValue(_ value: [UInt8], to attribute: ServerAttribute, kind: GATTWriteRequest.Kind, authorizing: Bool = true,
                    _ context: RequestContext) async -> ATTErrorCode? {
        if let refusal = await writeRefusal(attribute, kind: kind, length: value.count, authorizing: authorizing, context) {
            return refusal
        }
        if case let .clientConfiguration(valueHandle, properties) = attribute.kind {
            return configure(valueHandle: valueHandle, properties: properties, value: value, context)
        }
        if attribute.handle == AttributeDatabase.clientSupportedFeaturesHandle { return writeClientFeatures(value, context) }
        if let onWrite = attribute.onWrite {
            let request = GATTWriteRequest(connectionHandle: context.connectionHandle, peer: context.peer, handle: attribute.handle,
                                           uuid: attribute.type, value: value, kind: kind)
            guard let answer = await HandlerDeadline.run(timeout: settings.handlerTimeout, clock: clock, { await onWrite(request) }) else {
                logger.warning("write handler of \(attribute.type) did not answer within \(settings.handlerTimeout)")
                return .unlikelyError
            }
            if case let .error(code) = answer { return code }
        }
        // The database may have changed while the handler ran: store only into the same attribute.
        if let current = database.attribute(at: attribute.handle), current.type == attribute.type, current.kind == attribute.kind {
            database.setValue(value, at: attribute.handle)
        }
        return nil
    }

}
