import BluetoothCore

/// What the permission checks need to know about a link: its security, whether this device
/// has a key for the peer, and the application's authorization.
extension GATTServer {
    /// The link's security now, not as it was when a PDU arrived: what a notification or
    /// indication is checked against as it leaves. A Host connection's is its ATT bearer's.
    func currentSecurity(of client: ConnectedClient) -> LinkSecurity {
        client.link.bearer.security
    }

    /// Whether this device has a key to encrypt the link with the client (a bond with it).
    func hasKey(for context: RequestContext) -> Bool {
        guard let peer = context.peer else { return false }
        return keyAvailability(peer)
    }

    /// The application's answer for an attribute that requires authorization: `nil` when
    /// it grants the access, Insufficient Authorization when it refuses, has no handler, or
    /// does not answer within ``GATTServerSettings/handlerTimeout``.
    func authorize(_ attribute: ServerAttribute, access: GATTAuthorizationRequest.Access, _ context: RequestContext) async -> ATTErrorCode? {
        guard let handler = authorizationHandler else {
            logger.debug("\(access) of \(attribute.type) needs authorization and no handler grants it")
            return .insufficientAuthorization
        }
        let request = GATTAuthorizationRequest(connectionHandle: context.connectionHandle, peer: context.peer,
                                               handle: attribute.handle, uuid: attribute.type, access: access)
        guard let granted = await HandlerDeadline.run(timeout: settings.handlerTimeout, clock: clock, { await handler(request) }) else {
            logger.warning("authorization handler did not answer for \(attribute.type) within \(settings.handlerTimeout)")
            return .insufficientAuthorization
        }
        return granted ? nil : .insufficientAuthorization
    }

    /// Tells the server whether this device has a key (a bond) for a peer, so that a client
    /// on an unencrypted link is told to encrypt (Insufficient Encryption) rather than to
    /// pair (Insufficient Authentication) (Core 6.0, Vol 3, Part C, 10.3.1). The host sets
    /// it; the check runs on the server's actor when an unencrypted link asks for an
    /// attribute that needs encryption, so it must be quick and must not block.
    /// Without one the server has no keys.
    public func setKeyAvailability(_ check: @escaping @Sendable (DeviceAddress) -> Bool) {
        keyAvailability = check
    }

    /// Decides reads and writes of attributes that require authorization; it runs under
    /// ``GATTServerSettings/handlerTimeout``. Without one such accesses are refused with
    /// Insufficient Authorization.
    public func setAuthorizationHandler(_ handler: GATTAuthorizationHandler?) {
        authorizationHandler = handler
    }

    /// The security of a connection whose client is wired in memory
    /// (``receive(_:connectionHandle:peer:)``), as a host would set it on Encryption Change:
    /// PDUs received from now on are checked against it, and with a bond's identity
    /// (``LinkSecurity/bondIdentity``) a client that has talked takes up that bond's state. A Host
    /// connection's security is its ATT bearer's; this does not change it.
    public nonisolated func setSecurity(_ security: LinkSecurity, connectionHandle: UInt16) {
        let bearer = memoryBearer(connectionHandle)
        bearer.setSecurity(security)
        guard security.bondIdentity != nil else { return }
        // A client wired in memory is taken up once it has talked: its first PDU carries this
        // security, and its serving takes up the bond's state then.
        queue(.encrypted(security), on: ServerLink(connectionHandle: connectionHandle, peer: nil, bearer: bearer, isWiredInMemory: true),
              limit: inboundLimit.limit, onlyIfServed: true)
    }
}
