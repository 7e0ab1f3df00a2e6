/// How the two devices authenticate each other during pairing (Core 6.0, Vol 3, Part H,
/// 2.3.5.1), chosen from both sides' IO capabilities, MITM flags and OOB flags.
public enum PairingMethod: Sendable, Hashable, CustomStringConvertible {
    /// No authentication: the keys are unauthenticated (no MITM protection).
    case justWorks
    /// Both devices show a six-digit number and both users confirm it matches (LE Secure
    /// Connections only).
    case numericComparison
    /// One side displays a six-digit passkey and the other types it; with
    /// `initiatorDisplays == false && responderDisplays == false` both users type the same one.
    case passkeyEntry(initiatorDisplays: Bool, responderDisplays: Bool)
    /// Authentication data exchanged out of band (NFC, a QR code, …).
    case outOfBand

    /// Whether keys from this method are authenticated (MITM-protected).
    public var isAuthenticated: Bool { self != .justWorks }

    public var description: String {
        switch self {
        case .justWorks: return "Just Works"
        case .numericComparison: return "Numeric Comparison"
        case let .passkeyEntry(initiatorDisplays, responderDisplays):
            if initiatorDisplays { return "Passkey Entry (initiator displays)" }
            if responderDisplays { return "Passkey Entry (responder displays)" }
            return "Passkey Entry (both type)"
        case .outOfBand: return "Out of Band"
        }
    }

    /// The method for a pairing between these features (Core 6.0, Vol 3, Part H, 2.3.5.1):
    /// out of band when the OOB flags say so, Just Works when neither side wants MITM
    /// protection, else the IO capability table (Table 2.8).
    static func select(request: SMPPairingFeatures, response: SMPPairingFeatures, secureConnections: Bool) -> PairingMethod {
        if secureConnections {
            // LE Secure Connections: OOB when at least one side has the other's OOB data.
            if request.oobDataPresent || response.oobDataPresent { return .outOfBand }
        } else if request.oobDataPresent && response.oobDataPresent {
            return .outOfBand
        }
        let mitm = request.authenticationRequirements.contains(.mitm) || response.authenticationRequirements.contains(.mitm)
        guard mitm else { return .justWorks }
        return ioCapabilityTable(initiator: request.ioCapability, responder: response.ioCapability, secureConnections: secureConnections)
    }

    /// Table 2.8 (Core 6.0, Vol 3, Part H, 2.3.5.1), by initiator (row) and responder
    /// (column) capability. Where the table has two entries, the second is for LE Secure
    /// Connections.
    static func ioCapabilityTable(initiator: SMPIOCapability, responder: SMPIOCapability, secureConnections: Bool) -> PairingMethod {
        let jw = PairingMethod.justWorks
        let initiatorShows = PairingMethod.passkeyEntry(initiatorDisplays: true, responderDisplays: false)
        let responderShows = PairingMethod.passkeyEntry(initiatorDisplays: false, responderDisplays: true)
        let bothType = PairingMethod.passkeyEntry(initiatorDisplays: false, responderDisplays: false)
        let nc = secureConnections ? PairingMethod.numericComparison : nil
        //                 responder: DisplayOnly      DisplayYesNo           KeyboardOnly    NoInputNoOutput KeyboardDisplay
        let table: [SMPIOCapability: [PairingMethod]] = [
            .displayOnly: [jw, jw, initiatorShows, jw, initiatorShows],
            .displayYesNo: [jw, nc ?? jw, initiatorShows, jw, nc ?? initiatorShows],
            .keyboardOnly: [responderShows, responderShows, bothType, jw, responderShows],
            .noInputNoOutput: [jw, jw, jw, jw, jw],
            .keyboardDisplay: [responderShows, nc ?? responderShows, initiatorShows, jw, nc ?? initiatorShows],
        ]
        return table[initiator]?[Int(responder.rawValue)] ?? jw
    }
}
