extension SecurityToolbox {
    /// The confirm value generation function f4 of LE Secure Connections (Core 6.0, Vol 3,
    /// Part H, 2.2.6): `AES-CMAC_X(U || V || Z)`.
    ///
    /// `u` and `v` are P-256 x coordinates, 32 octets most significant first (another length is
    /// fitted to 32 octets at its front, giving a value that will not match the peer's).
    public static func f4(u: [UInt8], v: [UInt8], x: UInt128, z: UInt8) -> UInt128 {
        aesCMAC(key: x, message: fitted(u, count: 32) + fitted(v, count: 32) + [z])
    }

    /// The key generation function f5 of LE Secure Connections (Core 6.0, Vol 3, Part H,
    /// 2.2.7): the MacKey and the LTK, derived from the DHKey `w` (32 octets, most significant
    /// first).
    ///
    /// `a1` and `a2` are 56-bit values: the address type (0 public, 1 random) in bits 48...55
    /// and the 48-bit address below it.
    public static func f5(w: [UInt8], n1: UInt128, n2: UInt128, a1: UInt64, a2: UInt64) -> (macKey: UInt128, ltk: UInt128) {
        let t = aesCMAC(key: f5Salt, message: fitted(w, count: 32))
        // Counter || keyID "btle" || N1 || N2 || A1 || A2 || Length (256 bits).
        let tail = octets(f5KeyID, count: 4) + octets(n1) + octets(n2)
            + octets(a1, count: 7) + octets(a2, count: 7) + [0x01, 0x00]
        return (aesCMAC(key: t, message: [0] + tail), aesCMAC(key: t, message: [1] + tail))
    }

    /// The check value generation function f6 of LE Secure Connections (Core 6.0, Vol 3,
    /// Part H, 2.2.8): `AES-CMAC_W(N1 || N2 || R || IOcap || A1 || A2)`, with the MacKey as `w`.
    ///
    /// `ioCap` is 24 bits: AuthReq, OOB data flag and IO capability, from most to least
    /// significant octet. `a1` and `a2` are as for ``f5(w:n1:n2:a1:a2:)``.
    public static func f6(w: UInt128, n1: UInt128, n2: UInt128, r: UInt128, ioCap: UInt32, a1: UInt64, a2: UInt64) -> UInt128 {
        let message = octets(n1) + octets(n2) + octets(r) + octets(ioCap, count: 3)
            + octets(a1, count: 7) + octets(a2, count: 7)
        return aesCMAC(key: w, message: message)
    }

    /// The numeric comparison value generation function g2 (Core 6.0, Vol 3, Part H, 2.2.9):
    /// `AES-CMAC_X(U || V || Y) mod 2^32`. The whole 32-bit value is returned; the six digits
    /// shown to the user are this value modulo 10^6. `u` and `v` are as for ``f4(u:v:x:z:)``.
    public static func g2(u: [UInt8], v: [UInt8], x: UInt128, y: UInt128) -> UInt32 {
        let mac = aesCMAC(key: x, message: fitted(u, count: 32) + fitted(v, count: 32) + octets(y))
        return UInt32(truncatingIfNeeded: mac)
    }

    /// The link key conversion function h6 (Core 6.0, Vol 3, Part H, 2.2.10):
    /// `AES-CMAC_W(keyID)`, `keyID` being four octets such as `"tmp1"` or `"lebr"` read as a
    /// number (``keyIDTmp1``, ``keyIDLebr``).
    public static func h6(w: UInt128, keyID: UInt32) -> UInt128 {
        aesCMAC(key: w, message: octets(keyID, count: 4))
    }

    /// The link key conversion function h7 (Core 6.0, Vol 3, Part H, 2.2.11):
    /// `AES-CMAC_SALT(W)`.
    public static func h7(salt: UInt128, w: UInt128) -> UInt128 {
        aesCMAC(key: salt, message: octets(w))
    }

    /// The key ID "tmp1" of h6 and, as a 128-bit number, the SALT of h7 in cross-transport key
    /// derivation (Core 6.0, Vol 3, Part H, 2.4.2.4 and 2.4.2.5).
    public static let keyIDTmp1: UInt32 = 0x746D_7031
    /// The key ID "lebr" of h6 (Core 6.0, Vol 3, Part H, 2.4.2.4).
    public static let keyIDLebr: UInt32 = 0x6C65_6272

    /// f5's SALT (Core 6.0, Vol 3, Part H, 2.2.7).
    static let f5Salt: UInt128 = 0x6C88_8391_AAF5_A538_6037_0BDB_5A60_83BE
    /// f5's keyID, "btle".
    static let f5KeyID: UInt32 = 0x6274_6C65
}
