import BluetoothCore

/// Phase 3 (Core 6.0, Vol 3, Part H, 3.6.1): over the encrypted link, the responder sends
/// its keys first, then the initiator; each side's keys go in a fixed order: Encryption
/// Information and Central Identification (legacy LTK), Identity Information and Identity
/// Address Information, Signing Information.
extension PairingProcedure {
    /// The PDUs a side sends for these keys, in order.
    static func keyPDUCodes(_ keys: SMPKeyDistribution) -> [SMPCode] {
        var codes: [SMPCode] = []
        if keys.contains(.encryptionKey) { codes += [.encryptionInformation, .centralIdentification] }
        if keys.contains(.identityKey) { codes += [.identityInformation, .identityAddressInformation] }
        if keys.contains(.signingKey) { codes.append(.signingInformation) }
        return codes
    }

    mutating func beginKeyDistribution() -> [Action] {
        moveTo(.distributingKeys)
        if isSecureConnections {
            // Both sides use the LTK the pairing derived (Vol 3, Part H, 2.3.5.6.5).
            localKeys.longTermKey = encryptionKey
            peerKeys.longTermKey = encryptionKey
        }
        pendingKeyPDUs = Self.keyPDUCodes(expectedPeerKeys)
        if role == .responder {
            let sent = sendLocalKeys()
            return pendingKeyPDUs.isEmpty ? sent + finish() : sent
        }
        return pendingKeyPDUs.isEmpty ? sendLocalKeys() + finish() : []
    }

    /// One key PDU from the peer, in the order of Vol 3, Part H, 3.6.1.
    mutating func receiveKey(_ pdu: SMPPDU) -> [Action] {
        guard let expected = pendingKeyPDUs.first, pdu.code == expected else {
            return fail(.unspecifiedReason, .invalidKeyDistribution("unexpected \(pdu.code.name)"))
        }
        pendingKeyPDUs.removeFirst()
        switch pdu {
        case let .encryptionInformation(ltk): peerKeys.longTermKey = ltk
        case let .centralIdentification(ediv, rand):
            peerKeys.ediv = ediv
            peerKeys.rand = rand
        case let .identityInformation(irk):
            // All zeros is what a device without an IRK sends: anybody can make addresses that
            // "resolve" with it, and a controller's resolving list reads it as "no IRK".
            peerKeys.identityResolvingKey = irk == 0 ? nil : irk
        case let .identityAddressInformation(address):
            if acceptsIdentity(address) {
                peerKeys.identityAddress = address
            } else {
                // Without its identity the IRK names no one: both go.
                peerKeys.identityResolvingKey = nil
                droppedIdentityAddress = address
            }
        case let .signingInformation(csrk): peerKeys.signatureKey = csrk
        default: break
        }
        guard pendingKeyPDUs.isEmpty else { return [] }
        return role == .initiator ? sendLocalKeys() + finish() : finish()
    }

    /// Whether the identity address a peer distributed is taken. It must be a public or static
    /// random address (Core 6.0, Vol 3, Part H, 3.6.5). And a peer that paired from an identity
    /// address (not a private one) is known by that address: if it names another, trusting it
    /// would file this pairing's keys under someone else's bond, and the peer would not be found
    /// again where it connects from. Linux drops such an identity and its IRK too
    /// (net/bluetooth/smp.c, for the Microsoft Surface Precision Mouse); Bumble sends one on a
    /// controller with a public address while it uses a static random address.
    func acceptsIdentity(_ address: DeviceAddress) -> Bool {
        guard address.isIdentityAddress else { return false }
        let pairedFrom = role == .initiator ? responderAddress : initiatorAddress
        let base = DeviceAddress(pairedFrom.address, type: pairedFrom.type.base)
        return !base.isIdentityAddress || base == DeviceAddress(address.address, type: address.type.base)
    }

    /// Sends this device's keys, made up now (a legacy LTK with its EDIV and Rand, a CSRK) or
    /// its identity.
    private mutating func sendLocalKeys() -> [Action] {
        var actions: [Action] = []
        if keysToSend.contains(.encryptionKey) {
            let ltk = masked(random.next128())
            localKeys.longTermKey = ltk
            localKeys.ediv = random.next16()
            localKeys.rand = random.next64()
            actions.append(.send(.encryptionInformation(longTermKey: ltk)))
            actions.append(.send(.centralIdentification(ediv: localKeys.ediv, rand: localKeys.rand)))
        }
        if keysToSend.contains(.identityKey) {
            localKeys.identityResolvingKey = localIdentityResolvingKey
            localKeys.identityAddress = localIdentity
            actions.append(.send(.identityInformation(identityResolvingKey: localIdentityResolvingKey)))
            actions.append(.send(.identityAddressInformation(localIdentity)))
        }
        if keysToSend.contains(.signingKey) {
            let csrk = random.next128()
            localKeys.signatureKey = csrk
            actions.append(.send(.signingInformation(signatureKey: csrk)))
        }
        return actions
    }

    private mutating func finish() -> [Action] {
        moveTo(.complete)
        return [.complete(outcome)]
    }
}

extension DeviceAddress {
    /// Whether this is an identity address (Core 6.0, Vol 6, Part B, 1.3): a public address
    /// other than all zeros, or a static random address (its two most significant bits 0b11).
    var isIdentityAddress: Bool {
        switch type.base {
        case .public: return address != .zero
        default: return address.rawValue >> 46 & 0b11 == 0b11
        }
    }
}
