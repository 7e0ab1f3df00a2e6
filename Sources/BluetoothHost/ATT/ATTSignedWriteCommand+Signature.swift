import BluetoothCore
import BluetoothCrypto

/// The key and SignCounter one Signed Write Command is signed with (Core 6.0, Vol 3,
/// Part H, 2.4.5): the CSRK this device distributed to the peer, and a counter value never
/// used with it before.
public struct SignedWriteKey: Sendable, Hashable {
    /// The Connection Signature Resolving Key.
    public var key: UInt128
    /// The SignCounter of this write.
    public var signCounter: UInt32

    public init(key: UInt128, signCounter: UInt32) {
        self.key = key
        self.signCounter = signCounter
    }
}

/// Reserves the key and counter of the next signed write to `peer`; the host's comes from
/// the bond store and saves the advanced counter before it returns, so a counter is never
/// used twice, even across runs. Throws when there is no CSRK for the peer.
public typealias SignedWriteSigner = @Sendable (_ peer: DeviceAddress) async throws -> SignedWriteKey

/// What a host says of a Signed Write Command received from a peer.
public enum SignedWriteVerdict: Sendable, Hashable, CustomStringConvertible {
    /// The MAC is right and the SignCounter is new (now stored). `security` is what the
    /// signature stands for when permissions are checked: the bond's key size and
    /// authentication (LE security mode 2, Core 6.0, Vol 3, Part C, 10.2.2).
    case accepted(security: LinkSecurity)
    /// There is no CSRK for the peer (no bond, or it distributed none).
    case noKey
    /// The MAC does not match the PDU.
    case badSignature
    /// The SignCounter is not above the last one accepted: a replay, or an old write.
    case staleCounter(received: UInt32, lowestAccepted: UInt32)

    public var description: String {
        switch self {
        case .accepted: return "accepted"
        case .noKey: return "no signature key for the peer"
        case .badSignature: return "the signature does not match"
        case let .staleCounter(received, lowest): return "SignCounter \(received) below \(lowest): replayed or old"
        }
    }
}

/// Checks a Signed Write Command received from `peer`; the host's checks the MAC with the
/// CSRK the peer distributed, and stores the SignCounter it accepts.
public typealias SignedWriteVerifier = @Sendable (_ peer: DeviceAddress, _ command: ATTSignedWriteCommand) async -> SignedWriteVerdict

extension ATTSignedWriteCommand {
    /// A write signed with `key` (Core 6.0, Vol 3, Part F, 3.4.5.4 and Part H, 2.4.5).
    public init(handle: UInt16, value: [UInt8], signedWith key: SignedWriteKey) {
        let mac = SecurityToolbox.signatureMAC(key: key.key, pdu: Self.signedOctets(handle: handle, value: value),
                                               signCounter: key.signCounter)
        self.init(handle: handle, value: value, signCounter: key.signCounter, mac: mac)
    }

    /// Whether the MAC is the one `key` gives this PDU and its SignCounter.
    public func isSigned(by key: UInt128) -> Bool {
        // Compared in constant time: a forger learns nothing from how fast a guess is refused.
        SecurityToolbox.constantTimeEqual(SecurityToolbox.signatureMAC(key: key, pdu: Self.signedOctets(handle: handle, value: value),
                                                                       signCounter: signCounter), mac)
    }

    /// The octets the MAC covers: the PDU before its signature (opcode, handle, value).
    static func signedOctets(handle: UInt16, value: [UInt8]) -> [UInt8] {
        [Self.opcode.rawValue, UInt8(truncatingIfNeeded: handle), UInt8(truncatingIfNeeded: handle >> 8)] + value
    }
}
