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
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): features.write(to: &writer)
        case let .pairingConfirm(value), let .pairingRandom(value), let .encryptionInformation(value),
             let .identityInformation(value), let .signingInformation(value), let .pairingDHKeyCheck(value):
            SMPWire.write128(value, to: &writer)
        case let .pairingFailed(reason): writer.write(reason.rawValue)
        case let .centralIdentification(ediv, rand): writer.write(ediv); writer.write(rand)
        case let .identityAddressInformation(address):
            writer.write(address.type.base.rawValue)
            address.address.write(to: &writer)
        case let .securityRequest(authReq): writer.write(authReq.rawValue)
        case let .pairingPublicKey(key): writer.write(contentsOf: key.x); writer.write(contentsOf: key.y)
        case let .keypressNotification(type): writer.write(type.rawValue)
        }
        return writer.bytes
    }

    /// Decodes one SMP PDU (the payload of a B-frame on the SMP channel).
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> SMPPDU {
        guard let first = bytes.first else { throw .truncated(context: "SMP PDU", needed: 1, available: 0) }
        let code = SMPCode(rawValue: first)
        var reader = ByteReader(bytes.dropFirst(), context: "SMP \(code.name)")
        let pdu: SMPPDU
        switch code {
        case .pairingRequest: pdu = .pairingRequest(try SMPPairingFeatures(reading: &reader))
        case .pairingResponse: pdu = .pairingResponse(try SMPPairingFeatures(reading: &reader))
        case .pairingConfirm: pdu = .pairingConfirm(confirmValue: try SMPWire.read128(&reader))
        case .pairingRandom: pdu = .pairingRandom(randomValue: try SMPWire.read128(&reader))
        case .pairingFailed: pdu = .pairingFailed(SMPPairingFailureReason(rawValue: try reader.readUInt8()))
        case .encryptionInformation: pdu = .encryptionInformation(longTermKey: try SMPWire.read128(&reader))
        case .centralIdentification:
            pdu = .centralIdentification(ediv: try reader.readUInt16(), rand: try reader.readUInt64())
        case .identityInformation: pdu = .identityInformation(identityResolvingKey: try SMPWire.read128(&reader))
        case .identityAddressInformation:
            let rawType = try reader.readUInt8()
            // Only public (0x00) and static random (0x01) identity addresses (Vol 3, Part H, 3.6.5).
            guard rawType <= 1, let type = AddressType(rawValue: rawType) else {
                throw .invalidValue(context: reader.context, field: "AddrType", value: UInt64(rawType))
            }
            pdu = .identityAddressInformation(DeviceAddress(try BluetoothAddress(reading: &reader), type: type))
        case .signingInformation: pdu = .signingInformation(signatureKey: try SMPWire.read128(&reader))
        case .securityRequest: pdu = .securityRequest(SMPAuthenticationRequirements(rawValue: try reader.readUInt8()))
        case .pairingPublicKey:
            let x = try reader.readBytes(SMPPublicKey.coordinateLength)
            let y = try reader.readBytes(SMPPublicKey.coordinateLength)
            guard let key = SMPPublicKey(x: x, y: y) else {
                throw .invalidValue(context: reader.context, field: "public key length", value: UInt64(x.count + y.count))
            }
            pdu = .pairingPublicKey(key)
        case .pairingDHKeyCheck: pdu = .pairingDHKeyCheck(dhKeyCheck: try SMPWire.read128(&reader))
        case .keypressNotification:
            let raw = try reader.readUInt8()
            guard let type = SMPKeypressNotificationType(rawValue: raw) else {
                throw .invalidValue(context: reader.context, field: "notification type", value: UInt64(raw))
            }
            pdu = .keypressNotification(type)
        default:
            throw .unknownOpcode(context: "SMP PDU", opcode: UInt64(first))
        }
        try reader.expectEnd()
        return pdu
    }

    public var description: String {
        switch self {
        case let .pairingRequest(features), let .pairingResponse(features): return "\(code.name) \(features)"
        case let .pairingConfirm(value), let .pairingRandom(value), let .encryptionInformation(value),
             let .identityInformation(value), let .signingInformation(value), let .pairingDHKeyCheck(value):
            return "\(code.name) \(SMPWire.hex(value))"
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

/// 128-bit field codec for SMP: least significant octet first.
enum SMPWire {
    static func read128(_ reader: inout ByteReader) throws(PacketDecodingError) -> UInt128 {
        let low = try reader.readUInt64()
        let high = try reader.readUInt64()
        return UInt128(high) << 64 | UInt128(low)
    }

    static func write128(_ value: UInt128, to writer: inout ByteWriter) {
        writer.write(UInt64(truncatingIfNeeded: value))
        writer.write(UInt64(truncatingIfNeeded: value >> 64))
    }

    static func hex(_ value: UInt128) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 32 - text.count)) + text
    }
}
