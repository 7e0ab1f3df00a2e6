/// Raising a link's security when the peer's server asks for it, as iOS does.
extension Connection {
    /// Runs `body`; when the peer's server refuses it for the link's security (Core 6.0, Vol 3,
    /// Part C, 10.3.1), raises the link's security and runs it again, at most twice (encrypting
    /// with a bond may show that its key is not enough). `willRaise` hears each refusal first.
    ///
    /// - Insufficient Encryption, or Insufficient Authentication on a link not encrypted:
    ///   encrypts (with the bond's key, else by pairing).
    /// - Insufficient Authentication on an encrypted link: a key with MITM protection (the
    ///   bond's if it has it, else a pairing); as central, on a link whose key is authenticated
    ///   but from LE legacy pairing, a new pairing (LE Secure Connections where the peer has it:
    ///   the server wants security level 4).
    /// - Encryption Key Size Too Short, as central: pairs again asking for a longer key than the
    ///   link's, where ``SecurityManagerSettings/maximumKeySize`` allows one (the new bond
    ///   replaces the shorter one); a peer that cannot give one fails that pairing with
    ///   Encryption Key Size (``PairingFailure/keySizeTooSmall(_:)``, as
    ///   ``HostError/pairingFailed(_:)``).
    ///
    /// A refusal no raise can answer is thrown as it came (``HostError/att(_:)``): Encryption Key
    /// Size Too Short where the settings allow no longer key or as peripheral, Insufficient
    /// Authentication on a link already at level 4.
    public func raisingSecurity<T: Sendable>(_ body: () async throws -> T,
                                             willRaise: (ATTErrorCode) -> Void = { _ in }) async throws -> T {
        try await raisingSecurity(first: body, then: body, willRaise: willRaise)
    }

    /// ``raisingSecurity(_:willRaise:)`` whose first try is `first` and whose tries after a
    /// raise are `then` (a read started without a task goes on from its first response).
    func raisingSecurity<T: Sendable>(first: () async throws -> T, then: () async throws -> T,
                                      willRaise: (ATTErrorCode) -> Void = { _ in }) async throws -> T {
        var raises = 0
        while true {
            do {
                return try await (raises == 0 ? first() : then())
            } catch let HostError.att(error) where raises < 2 {
                guard let raise = securityRaise(for: error.code) else { throw HostError.att(error) }
                willRaise(error.code)
                raises += 1
                switch raise {
                case let .secure(authenticated): _ = try await host.secure(self, authenticated: authenticated)
                case let .pair(authenticated, minimumKeySize): _ = try await host.pair(self, authenticated: authenticated, minimumKeySize: minimumKeySize)
                }
            }
        }
    }

    private enum SecurityRaise {
        /// Encrypt (with a bond good enough, else by pairing).
        case secure(authenticated: Bool)
        /// Pair again: the bond cannot give what the server wants.
        case pair(authenticated: Bool, minimumKeySize: Int?)
    }

    /// What answers the server's refusal on this link now, if anything does.
    private func securityRaise(for code: ATTErrorCode) -> SecurityRaise? {
        let current = security
        let trusted = current.isEncrypted && !current.isBondRemoved
        switch code {
        case .insufficientEncryption:
            return .secure(authenticated: false)
        case .insufficientAuthentication:
            guard trusted, current.isAuthenticated else {
                // Authentication is what is missing when the link is already encrypted.
                return .secure(authenticated: current.isEncrypted)
            }
            // Authenticated already: only a new pairing, with LE Secure Connections, gives more.
            guard role == .central, !current.isSecureConnections else { return nil }
            return .pair(authenticated: true, minimumKeySize: nil)
        case .encryptionKeySizeTooShort:
            guard role == .central, trusted, current.keySize < host.configuration.security.effectiveMaximumKeySize else { return nil }
            return .pair(authenticated: current.isAuthenticated, minimumKeySize: current.keySize + 1)
        default:
            return nil
        }
    }
}
