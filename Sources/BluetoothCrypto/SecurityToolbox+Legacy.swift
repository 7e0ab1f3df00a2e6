extension SecurityToolbox {
    /// The confirm value generation function c1 of LE legacy pairing (Core 6.0, Vol 3, Part H,
    /// 2.2.3): `e(k, e(k, r XOR p1) XOR p2)`.
    ///
    /// `pairingRequest` and `pairingResponse` are the 7-octet Pairing Request and Pairing
    /// Response PDUs exactly as sent on the wire (code first); the spec reads them as 56-bit
    /// numbers whose least significant octet is that first one (D.1's preq 0x07071000000101 is
    /// the wire `01 01 00 00 10 07 07`). Another length is fitted to 7 octets at its end.
    /// Address types are 0 (public) or 1 (random); only their lowest bit is used. Addresses are
    /// 48-bit values.
    public static func c1(
        k: UInt128, r: UInt128, pairingRequest: [UInt8], pairingResponse: [UInt8],
        initiatorAddressType: UInt8, initiatorAddress: UInt64,
        responderAddressType: UInt8, responderAddress: UInt64
    ) -> UInt128 {
        let preq = littleEndianValue(pairingRequest, count: 7)
        let pres = littleEndianValue(pairingResponse, count: 7)
        // p1 = pres || preq || rat' || iat', iat' being the least significant octet.
        let p1 = pres << 72 | preq << 16
            | UInt128(responderAddressType & 1) << 8 | UInt128(initiatorAddressType & 1)
        // p2 = padding (32 bits) || ia || ra, ra being the least significant octets.
        let p2 = UInt128(initiatorAddress & addressMask) << 48 | UInt128(responderAddress & addressMask)
        return e(key: k, plaintext: e(key: k, plaintext: r ^ p1) ^ p2)
    }

    /// The key generation function s1 of LE legacy pairing (Core 6.0, Vol 3, Part H, 2.2.4):
    /// the STK, `e(k, r1' || r2')` with the least significant 64 bits of each random value,
    /// r1's (Srand's) in the most significant half.
    public static func s1(k: UInt128, r1: UInt128, r2: UInt128) -> UInt128 {
        let lowHalf: UInt128 = 0xFFFF_FFFF_FFFF_FFFF
        return e(key: k, plaintext: (r1 & lowHalf) << 64 | (r2 & lowHalf))
    }

    /// The random address hash function ah (Core 6.0, Vol 3, Part H, 2.2.2):
    /// `e(k, padding || r) mod 2^24`, with a 24-bit `r` (higher bits are ignored) and a 24-bit result.
    public static func ah(k: UInt128, r: UInt32) -> UInt32 {
        let hash = e(key: k, plaintext: UInt128(r & 0xFF_FFFF))
        return UInt32(truncatingIfNeeded: hash) & 0xFF_FFFF
    }

    static let addressMask: UInt64 = 0xFFFF_FFFF_FFFF

    /// The number whose octets, least significant first, are `bytes` fitted to `count` octets.
    private static func littleEndianValue(_ bytes: [UInt8], count: Int) -> UInt128 {
        fitted(bytes.reversed(), count: count).reduce(0) { $0 << 8 | UInt128($1) }
    }
}
