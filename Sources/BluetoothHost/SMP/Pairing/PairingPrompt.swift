import BluetoothCore

/// What a pairing method needs from the user of one side (Core 6.0, Vol 3, Part H, 2.3.5).
public enum PairingPrompt: Sendable, Hashable, CustomStringConvertible {
    /// Show this passkey (0…999999, shown as six digits) for the user to type on the peer.
    case displayPasskey(UInt32)
    /// The user types the passkey the peer shows (or, with keyboards on both sides, the same
    /// passkey on both).
    case enterPasskey
    /// Numeric Comparison: show this number (six digits) and ask whether the peer shows the same.
    case confirmNumber(UInt32)

    public var description: String {
        switch self {
        case let .displayPasskey(passkey): return "display passkey \(PairingPrompt.sixDigits(passkey))"
        case .enterPasskey: return "enter the passkey"
        case let .confirmNumber(number): return "confirm \(PairingPrompt.sixDigits(number))"
        }
    }

    /// `123` as `"000123"`.
    public static func sixDigits(_ value: UInt32) -> String {
        let text = String(value % 1_000_000)
        return String(repeating: "0", count: 6 - text.count) + text
    }
}

/// The keys one side distributed in phase 3 of pairing (Core 6.0, Vol 3, Part H, 3.6).
public struct PairingKeys: Sendable, Hashable {
    /// LTK with the EDIV and Rand that name it (legacy pairing; with LE Secure Connections
    /// both sides use the LTK the pairing derived, EDIV and Rand 0).
    public var longTermKey: UInt128?
    public var ediv: UInt16 = 0
    public var rand: UInt64 = 0
    public var identityResolvingKey: UInt128?
    public var identityAddress: DeviceAddress?
    public var signatureKey: UInt128?

    public init(longTermKey: UInt128? = nil, ediv: UInt16 = 0, rand: UInt64 = 0, identityResolvingKey: UInt128? = nil,
                identityAddress: DeviceAddress? = nil, signatureKey: UInt128? = nil) {
        self.longTermKey = longTermKey
        self.ediv = ediv
        self.rand = rand
        self.identityResolvingKey = identityResolvingKey
        self.identityAddress = identityAddress
        self.signatureKey = signatureKey
    }
}

/// How a pairing ended well: what the link's key is worth and which keys each side gave.
public struct PairingOutcome: Sendable, Hashable {
    public var method: PairingMethod
    public var isSecureConnections: Bool
    /// The encryption key size, 7…16 octets.
    public var keySize: Int
    /// Both sides asked for bonding: the keys are to be stored.
    public var isBonding: Bool
    /// What the peer distributed. With LE Secure Connections, ``PairingKeys/longTermKey`` holds
    /// the LTK both sides derived.
    public var peerKeys: PairingKeys
    /// What this device distributed (with LE Secure Connections, the same derived LTK).
    public var localKeys: PairingKeys
    /// An identity address the peer distributed and this device dropped, with its IRK: one
    /// that is not an identity address, or, from a peer that paired from an identity address,
    /// another one. The bond then stays under the address the peer paired from.
    public var droppedIdentityAddress: DeviceAddress? = nil

    /// The link security this pairing gives, once encrypted.
    public var security: LinkSecurity {
        LinkSecurity(isEncrypted: true, isAuthenticated: method.isAuthenticated, isSecureConnections: isSecureConnections,
                     keySize: keySize, isBonded: isBonding)
    }
}
