/// Data signing (Core 6.0, Vol 3, Part H, 2.4.5): the MAC of a Signed Write Command.
extension SecurityToolbox {
    /// The 64-bit MAC of signed data: the 64 most significant bits of
    /// AES-CMAC<sub>CSRK</sub>(m ‖ SignCounter), where `pdu` is m as it travels (for ATT, the
    /// opcode, handle and value, least significant octet first) and the SignCounter follows
    /// it least significant octet first.
    ///
    /// The spec's message is a number whose least significant octet is the PDU's first, so
    /// the whole octet string is reversed before it enters AES-CMAC most significant octet
    /// first. The MAC travels least significant octet first after the counter (Vol 3, Part F,
    /// 3.4.5.4). Checked against BlueZ's vector (unit/test-crypto.c, `sign_att_5`) and, on
    /// the interop rig, against Bumble's AES-CMAC.
    public static func signatureMAC(key: UInt128, pdu: [UInt8], signCounter: UInt32) -> UInt64 {
        var message = pdu
        message.reserveCapacity(pdu.count + 4)
        for shift in stride(from: 0, to: 32, by: 8) { message.append(UInt8(truncatingIfNeeded: signCounter >> UInt32(shift))) }
        return UInt64(truncatingIfNeeded: aesCMAC(key: key, message: message.reversed()) >> 64)
    }
}
