import BluetoothCore

/// IO Capability (Core 6.0, Vol 3, Part H, 3.5.1). Values 0x05…0xFF are reserved
/// and rejected by the decoder.
public enum SMPIOCapability: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case displayOnly = 0x00
    case displayYesNo = 0x01
    case keyboardOnly = 0x02
    case noInputNoOutput = 0x03
    case keyboardDisplay = 0x04

    public var description: String {
        switch self {
        case .displayOnly: return "DisplayOnly"
        case .displayYesNo: return "DisplayYesNo"
        case .keyboardOnly: return "KeyboardOnly"
        case .noInputNoOutput: return "NoInputNoOutput"
        case .keyboardDisplay: return "KeyboardDisplay"
        }
    }
}

/// The AuthReq field (Core 6.0, Vol 3, Part H, 3.5.1). Reserved bits are kept.
public struct SMPAuthenticationRequirements: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bonding_Flags = 0b01: the keys are stored (bits 0–1; 0b10 and 0b11 are reserved).
    public static let bonding = Self(rawValue: 0x01)
    /// MITM protection requested.
    public static let mitm = Self(rawValue: 0x04)
    /// LE Secure Connections supported (SC).
    public static let secureConnections = Self(rawValue: 0x08)
    /// Keypress notifications wanted in Passkey Entry.
    public static let keypress = Self(rawValue: 0x10)
    /// Support for the h7 function (CT2).
    public static let ct2 = Self(rawValue: 0x20)

    public var description: String {
        let names: [(Self, String)] = [(.bonding, "bonding"), (.mitm, "MITM"), (.secureConnections, "SC"),
                                       (.keypress, "keypress"), (.ct2, "CT2")]
        let set = names.filter { contains($0.0) }.map(\.1)
        return "[\(set.joined(separator: ", "))]"
    }
}

/// The Initiator / Responder Key Distribution fields (Core 6.0, Vol 3, Part H, 3.6.1).
/// Reserved bits are kept.
public struct SMPKeyDistribution: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// EncKey: LTK with EDIV and Rand (legacy pairing); ignored with Secure Connections.
    public static let encryptionKey = Self(rawValue: 0x01)
    /// IdKey: IRK and identity address.
    public static let identityKey = Self(rawValue: 0x02)
    /// SignKey: CSRK.
    public static let signingKey = Self(rawValue: 0x04)
    /// LinkKey: derive the BR/EDR link key.
    public static let linkKey = Self(rawValue: 0x08)

    public var description: String {
        let names: [(Self, String)] = [(.encryptionKey, "EncKey"), (.identityKey, "IdKey"), (.signingKey, "SignKey"),
                                       (.linkKey, "LinkKey")]
        return "[\(names.filter { contains($0.0) }.map(\.1).joined(separator: ", "))]"
    }
}

/// The six parameters of Pairing Request and Pairing Response (Core 6.0, Vol 3, Part H,
/// 3.5.1 and 3.5.2): the pairing features each side offers.
///
/// The maximum key size is kept as received; the Security Manager checks it (7…16) and
/// answers Pairing Failed "Encryption Key Size" itself.
public struct SMPPairingFeatures: Hashable, Sendable, CustomStringConvertible, PacketFields {
    public var ioCapability = SMPIOCapability.displayOnly
    /// OOB data flag: authentication data from a remote device is present.
    public var oobDataPresent = false
    public var authenticationRequirements: SMPAuthenticationRequirements = []
    /// Maximum Encryption Key Size, 7…16 octets.
    public var maximumEncryptionKeySize: UInt8 = 0
    public var initiatorKeyDistribution: SMPKeyDistribution = []
    public var responderKeyDistribution: SMPKeyDistribution = []

    public init() {}

    public init(ioCapability: SMPIOCapability, oobDataPresent: Bool = false,
                authenticationRequirements: SMPAuthenticationRequirements, maximumEncryptionKeySize: UInt8 = 16,
                initiatorKeyDistribution: SMPKeyDistribution, responderKeyDistribution: SMPKeyDistribution) {
        self.ioCapability = ioCapability
        self.oobDataPresent = oobDataPresent
        self.authenticationRequirements = authenticationRequirements
        self.maximumEncryptionKeySize = maximumEncryptionKeySize
        self.initiatorKeyDistribution = initiatorKeyDistribution
        self.responderKeyDistribution = responderKeyDistribution
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&ioCapability, field: "IO capability")
        try coder.bool(&oobDataPresent, field: "OOB data flag")
        try coder.uint8(&authenticationRequirements, field: "AuthReq")
        try coder.uint8(&maximumEncryptionKeySize)
        try coder.uint8(&initiatorKeyDistribution, field: "Initiator Key Distribution")
        try coder.uint8(&responderKeyDistribution, field: "Responder Key Distribution")
    }

    public var description: String {
        "IO=\(ioCapability) OOB=\(oobDataPresent) AuthReq=\(authenticationRequirements) "
            + "maxKey=\(maximumEncryptionKeySize) init=\(initiatorKeyDistribution) resp=\(responderKeyDistribution)"
    }
}
