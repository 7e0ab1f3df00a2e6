/// Raising a link's security when the peer's server asks for it, as iOS does.
extension Connection {
    /// Runs `body`; when the peer's server refuses it for the link's security (Insufficient
    /// Authentication or Insufficient Encryption, Core 6.0, Vol 3, Part C, 10.3.1), encrypts
    /// the link (with the bond's key, else by pairing) and runs it once more. `willRaise` hears
    /// the refusal first.
    public func raisingSecurity<T: Sendable>(_ body: () async throws -> T,
                                             willRaise: (ATTErrorCode) -> Void = { _ in }) async throws -> T {
        do {
            return try await body()
        } catch let HostError.att(error) where error.code == .insufficientAuthentication || error.code == .insufficientEncryption {
            willRaise(error.code)
            // Authentication is what is missing when the link is already encrypted.
            let authenticated = error.code == .insufficientAuthentication && security.isEncrypted
            _ = try await host.secure(self, authenticated: authenticated)
            return try await body()
        }
    }
}
