import BluetoothCore

/// Reading and writing one attribute value for a client, with the permission checks of
/// Core 6.0, Vol 3, Part F, 3.2.5 and the application's handlers.
extension GATTServer {
    /// Why the client may not read the attribute, if it may not.
    static func readRefusal(_ attribute: ServerAttribute) -> ATTErrorCode? {
        guard attribute.permissions.allowsReading else { return .readNotPermitted }
        // No link is encrypted: pairing is refused (Core 6.0, Vol 3, Part C, 10.3.1).
        if attribute.permissions.contains(.readEncryptionRequired) { return .insufficientAuthentication }
        return nil
    }

    /// Why the client may not write `length` octets to the attribute with a write of `kind`,
    /// if it may not. A characteristic value takes only the writes its properties declare
    /// (Core 6.0, Vol 3, Part G, 3.3.1.1): Write Request and prepared writes need Write, a
    /// Write Command needs Write Without Response.
    static func writeRefusal(_ attribute: ServerAttribute, kind: GATTWriteRequest.Kind, length: Int) -> ATTErrorCode? {
        guard attribute.permissions.allowsWriting else { return .writeNotPermitted }
        if case let .value(properties) = attribute.kind {
            let declared: CharacteristicProperties = kind == .command ? .writeWithoutResponse : .write
            guard properties.contains(declared) else { return .writeNotPermitted }
        }
        if attribute.permissions.contains(.writeEncryptionRequired) { return .insufficientAuthentication }
        guard length <= attribute.maximumLength else { return .invalidAttributeValueLength }
        return nil
    }

    /// The attribute's value as this client sees it: its own Client Characteristic
    /// Configuration, the read handler's answer, or the stored value.
    func readValue(of attribute: ServerAttribute, offset: Int = 0, _ context: RequestContext) async -> GATTReadResponse {
        if let refusal = Self.readRefusal(attribute) { return .error(refusal) }
        if case let .clientConfiguration(valueHandle, _) = attribute.kind {
            return .value(clientConfiguration(of: valueHandle, context).bytes)
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
    func writeValue(_ value: [UInt8], to attribute: ServerAttribute, kind: GATTWriteRequest.Kind, _ context: RequestContext) async -> ATTErrorCode? {
        if let refusal = Self.writeRefusal(attribute, kind: kind, length: value.count) { return refusal }
        if case let .clientConfiguration(valueHandle, properties) = attribute.kind {
            return configure(valueHandle: valueHandle, properties: properties, value: value, context)
        }
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
