import BluetoothCore

/// Signed Write Command (Core 6.0, Vol 3, Part F, 3.4.5.4; Part G, 4.9.2; Part C, 10.4.2).
///
/// A characteristic value takes signed writes when its properties include Authenticated
/// Signed Writes (the property is the permission, as Write Without Response is for Write
/// Commands) and its permissions allow writing. On a link that is not encrypted, the host's
/// ``SignedWriteVerifier`` checks the MAC with the CSRK the peer distributed and that the
/// SignCounter is new; the signature then stands in for encryption (LE security mode 2):
/// the attribute's write requirements are checked against the bond's key size and
/// authentication, so a write that needs MITM protection needs a signature from an
/// authenticated bond. A command gets no answer, ever: one refused is dropped, logged and
/// counted in ``rejectedSignedWriteCount``.
///
/// On an encrypted link data signing is not used (Vol 3, Part C, 10.2.2) and the link's
/// encryption already authenticates the PDU: the signature is not checked and no counter
/// is stored; the write is checked against the link's security like a Write Command.
extension GATTServer {
    /// Sets the check of Signed Write Commands; the host sets one that reads its bond store.
    /// Without one every Signed Write Command on an unencrypted link is dropped.
    public func setSignedWriteVerifier(_ verifier: SignedWriteVerifier?) {
        signedWriteVerifier = verifier
    }

    func write(_ command: ATTSignedWriteCommand, _ context: RequestContext) async {
        let handle = Hex.format(command.handle, digits: 4)
        guard let attribute = database.attribute(at: command.handle) else {
            return rejectSignedWrite("to unknown handle \(handle)")
        }
        // Refused before the signature is checked, so that no counter is spent on it.
        guard attribute.permissions.allowsWriting, case let .value(properties) = attribute.kind,
              properties.contains(.authenticatedSignedWrites) else {
            return rejectSignedWrite("to \(handle), which does not take signed writes")
        }
        var security = context.security
        if !security.isEncrypted {
            guard let peer = context.peer, let verifier = signedWriteVerifier else {
                return rejectSignedWrite("to \(handle): no signature key for the peer")
            }
            let verdict = await verifier(peer, command)
            guard case let .accepted(signed) = verdict else { return rejectSignedWrite("to \(handle) from \(peer): \(verdict)") }
            security = signed
        }
        let signedContext = RequestContext(clientID: context.clientID, connectionHandle: context.connectionHandle, peer: context.peer,
                                           mtu: context.mtu, security: security)
        if let code = await writeValue(command.value, to: attribute, kind: .signedCommand, signedContext) {
            rejectSignedWrite("to \(handle) not done: \(code)")
        }
    }

    private func rejectSignedWrite(_ why: String) {
        rejectedSignedWriteCount += 1
        logger.info("Signed Write Command \(why); ignored")
    }
}
