import BluetoothCore

/// A Security Manager Protocol command (Core 6.0, Vol 3, Part H, 3.5 and 3.6), as carried on
/// the SMP fixed channel (``L2CAPChannelID/securityManager``).
///
/// Every command is fixed-size, so decoding rejects short and over-long PDUs (the Security
/// Manager answers those with Pairing Failed "Invalid Parameters"). A code reserved for future
/// use throws `PacketDecodingError/unknownOpcode(context:opcode:)` carrying the code; such a
/// packet shall be ignored (Vol 3, Part H, 3.3).
///
/// 128-bit values (confirm, random, keys, DHKey check) are `UInt128` numbers; on the wire they
/// are least significant octet first.
public enum SMPPDU: Sendable, Hashable, CustomStringConvertible {
    /// 3.5.1: the initiator's pairing features.
    case pairingRequest(SMPPairingFeatures)
    /// 3.5.2: the responder's pairing features.
    case pairingResponse(SMPPairingFeatures)
    /// 3.5.3: Mconfirm / Sconfirm (legacy) or Cai / Cbi (Secure Connections).
    case pairingConfirm(confirmValue: UInt128)
    /// 3.5.4: Mrand / Srand or Nai / Nbi.
    case pairingRandom(randomValue: UInt128)
    /// 3.5.5: pairing stopped, with the reason.
    case pairingFailed(SMPPairingFailureReason)
    /// 3.6.2: the LTK.
    case encryptionInformation(longTermKey: UInt128)
    /// 3.6.3: EDIV and Rand identifying the LTK (legacy pairing).
    case centralIdentification(ediv: UInt16, rand: UInt64)
    /// 3.6.4: the IRK.
    case identityInformation(identityResolvingKey: UInt128)
    /// 3.6.5: the public or static random identity address.
    case identityAddressInformation(DeviceAddress)
    /// 3.6.6: the CSRK.
    case signingInformation(signatureKey: UInt128)
    /// 3.6.7: a peripheral asks the central to start pairing or encryption.
    case securityRequest(SMPAuthenticationRequirements)
    /// 3.5.6: the P-256 public key.
    case pairingPublicKey(SMPPublicKey)
    /// 3.5.7: Ea / Eb.
    case pairingDHKeyCheck(dhKeyCheck: UInt128)
    /// 3.5.8: progress of passkey entry.
    case keypressNotification(SMPKeypressNotificationType)

    public var code: SMPCode {
        switch self {
        case .pairingRequest: return .pairingRequest
        case .pairingResponse: return .pairingResponse
        case .pairingConfirm: return .pairingConfirm
        case .pairingRandom: return .pairingRandom
        case .pairingFailed: return .pairingFailed
        case .encryptionInformation: return .encryptionInformation
        case .centralIdentification: return .centralIdentification
        case .identityInformation: return .identityInformation
        case .identityAddressInformation: return .identityAddressInformation
        case .signingInformation: return .signingInformation
        case .securityRequest: return .securityRequest
        case .pairingPublicKey: return .pairingPublicKey
        case .pairingDHKeyCheck: return .pairingDHKeyCheck
        case .keypressNotification: return .keypressNotification
        }
    }

    /// The PDU: code then data.
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 65)
        writer.write(code.rawValue)
        var pdu = self
        // A writer throws nothing: it writes what the PDU holds.
        _ = try? pdu.fields(&writer)
        return writer.bytes
    }

    /// Decodes one SMP PDU (the payload of a B-frame on the SMP channel).
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> SMPPDU {
        guard let first = bytes.first else { throw .truncated(context: "SMP PDU", needed: 1, available: 0) }
        let code = SMPCode(rawValue: first)
        guard var pdu = blank(code) else { throw .unknownOpcode(context: "SMP PDU", opcode: UInt64(first)) }
        var reader = ByteReader(bytes.dropFirst(), context: "SMP \(code.name)")
        try pdu.fields(&reader)
        try reader.expectEnd()
        return pdu
    }

    /// A PDU of `code` with blank data, which decoding fills in; `nil` for a code reserved for
    /// future use.
    private static func blank(_ code: SMPCode) -> SMPPDU? {
        switch code {
        case .pairingRequest: return .pairingRequest(SMPPairingFeatures())
        case .pairingResponse: return .pairingResponse(SMPPairingFeatures())
        case .pairingConfirm: return .pairingConfirm(confirmValue: 0)
        case .pairingRandom: return .pairingRandom(randomValue: 0)
        case .pairingFailed: return .pairingFailed(.unspecifiedReason)
        case .encryptionInformation: return .encryptionInformation(longTermKey: 0)
        case .centralIdentification: return .centralIdentification(ediv: 0, rand: 0)
        case .identityInformation: return .identityInformation(identityResolvingKey: 0)
        case .identityAddressInformation: return .identityAddressInformation(DeviceAddress(.zero, type: .public))
        case .signingInformation: return .signingInformation(signatureKey: 0)
        case .securityRequest: return .securityRequest([])
        case .pairingPublicKey: return .pairingPublicKey(SMPPublicKey(mostSignificantFirstX: [], y: []))
        case .pairingDHKeyCheck: return .pairingDHKeyCheck(dhKeyCheck: 0)
        case .keypressNotification: return .keypressNotification(.passkeyEntryStarted)
        default: return nil
        }
    }

    /// The data of the PDU, declared once for encoding and decoding (``FieldCoder``). 128-bit
    /// values are least significant octet first.
    private mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        switch self {
        case var .pairingRequest(features): try coder.fields(&features); self = .pairingRequest(features)
        case var .pairingResponse(features): try coder.fields(&features); self = .pairingResponse(features)
        case var .pairingConfirm(value): try coder.uint128(&value); self = .pairingConfirm(confirmValue: value)
        case var .pairingRandom(value): try coder.uint128(&value); self = .pairingRandom(randomValue: value)
        case var .pairingFailed(reason): try coder.uint8(&reason, field: "Reason"); self = .pairingFailed(reason)
        case var .encryptionInformation(key): try coder.uint128(&key); self = .encryptionInformation(longTermKey: key)
        case .centralIdentification(var ediv, var rand):
            try coder.uint16(&ediv)
            try coder.uint64(&rand)
            self = .centralIdentification(ediv: ediv, rand: rand)
        case var .identityInformation(key): try coder.uint128(&key); self = .identityInformation(identityResolvingKey: key)
        case let .identityAddressInformation(identity):
            var type = identity.type, address = identity.address
            // Only public (0x00) and static random (0x01) identity addresses (Vol 3, Part H, 3.6.5).
            try coder.publicOrRandomAddressType(&type, field: "AddrType")
            try coder.address(&address)
            self = .identityAddressInformation(DeviceAddress(address, type: type))
        case var .signingInformation(key): try coder.uint128(&key); self = .signingInformation(signatureKey: key)
        case var .securityRequest(authReq): try coder.uint8(&authReq, field: "AuthReq"); self = .securityRequest(authReq)
        case let .pairingPublicKey(key):
            var x = key.x, y = key.y
            try coder.bytes(&x, count: SMPPublicKey.coordinateLength)
            try coder.bytes(&y, count: SMPPublicKey.coordinateLength)
            guard let decoded = SMPPublicKey(x: x, y: y) else {
                throw .invalidValue(context: coder.context, field: "public key length", value: UInt64(x.count + y.count))
            }
            self = .pairingPublicKey(decoded)
        case var .pairingDHKeyCheck(value): try coder.uint128(&value); self = .pairingDHKeyCheck(dhKeyCheck: value)
        case var .keypressNotification(type):
            try coder.uint8(&type, field: "notification type")
            self = .keypressNotification(type)
        }
    }

    public var description: String {
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): return "\(code.name) \(features)"
        case let .pairingConfirm(value), let .pairingRandom(value), let .encryptionInformation(value),
             let .identityInformation(value), let .signingInformation(value), let .pairingDHKeyCheck(value):
            return "\(code.name) \(Hex.digits(value, count: 32, uppercase: false))"
        case let .pairingFailed(reason): return "Pairing Failed: \(reason)"
        case let .centralIdentification(ediv, rand):
            return "Central Identification EDIV=\(Hex.format(ediv, digits: 4)) Rand=\(Hex.format(rand, digits: 16))"
        case let .identityAddressInformation(address): return "Identity Address Information \(address)"
        case let .securityRequest(authReq): return "Security Request AuthReq=\(authReq)"
        case let .pairingPublicKey(key): return "Pairing Public Key \(key)"
        case let .keypressNotification(type): return "Keypress Notification: \(type)"
        }
    }
}
