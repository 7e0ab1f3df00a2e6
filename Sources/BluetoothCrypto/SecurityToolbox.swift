import Crypto
import CryptoExtras

/// The Security Manager's cryptographic toolbox (Core 6.0, Vol 3, Part H, 2.2).
///
/// 128-bit values are numbers (`UInt128`); the spec's "most significant octet first" is how they
/// are turned into AES input. 256-bit values (P-256 coordinates, DHKey) are 32-byte arrays, most
/// significant octet first (the spec's order; SMP's wire order is the reverse).
///
/// AES-128 and AES-CMAC come from swift-crypto; this type only lays the functions' inputs out
/// as the spec defines them. The functions are grouped by pairing method in the files
/// `SecurityToolbox+Legacy.swift` (c1, s1, ah) and `SecurityToolbox+SecureConnections.swift`
/// (f4, f5, f6, g2, h6, h7).
public enum SecurityToolbox {
    /// The security function e: AES-128 encryption of one block (Core 6.0, Vol 3, Part H,
    /// 2.2.1), `key` and `plaintext` entering AES most significant octet first.
    public static func e(key: UInt128, plaintext: UInt128) -> UInt128 {
        var block = octets(plaintext)
        do {
            try AES.permute(&block, key: SymmetricKey(data: octets(key)))
        } catch {
            // Both are 16 octets by construction; swift-crypto refuses only other sizes.
            preconditionFailure("AES-128 refused a 16-octet block and key: \(error)")
        }
        return value(of: block)
    }

    /// AES-CMAC with a 128-bit key (RFC 4493; Core 6.0, Vol 3, Part H, 2.2.5). `message` is
    /// authenticated in array order, its first octet being the spec's most significant one.
    public static func aesCMAC(key: UInt128, message: [UInt8]) -> UInt128 {
        do {
            var mac = try AES.CMAC(key: SymmetricKey(data: octets(key)))
            message.withUnsafeBytes { mac.update(bufferPointer: $0) }
            return mac.finalize().withUnsafeBytes { value(of: $0) }
        } catch {
            preconditionFailure("AES-CMAC refused a 16-octet key: \(error)")
        }
    }

    // MARK: - Octets

    /// `value`'s 16 octets, most significant first.
    static func octets(_ value: UInt128) -> [UInt8] {
        (0..<16).map { UInt8(truncatingIfNeeded: value >> (8 * (15 - $0))) }
    }

    /// The low `count` octets of `value`, most significant first.
    static func octets(_ value: some FixedWidthInteger, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * (count - 1 - $0))) }
    }

    /// The number whose octets, most significant first, are the last 16 of `bytes`.
    static func value(of bytes: some Collection<UInt8>) -> UInt128 {
        bytes.suffix(16).reduce(0) { $0 << 8 | UInt128($1) }
    }

    /// `bytes` made exactly `count` octets long by dropping or zero-filling at the most
    /// significant end (the front), so that a wrong-length argument gives a well-defined value
    /// that simply will not match the peer's, never a crash.
    static func fitted(_ bytes: [UInt8], count: Int) -> [UInt8] {
        bytes.count >= count
            ? Array(bytes.suffix(count))
            : [UInt8](repeating: 0, count: count - bytes.count) + bytes
    }
}
