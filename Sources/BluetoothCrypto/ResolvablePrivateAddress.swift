/// Resolvable private addresses (Core 6.0, Vol 6, Part B, 1.3.2.2 and Vol 3, Part C, 10.8.2.3).
///
/// Addresses are 48-bit values: `prand << 24 | hash`, where prand's two most significant bits
/// are 0b01 and `hash = ah(IRK, prand)`.
public enum ResolvablePrivateAddress {
    /// A new resolvable private address for `irk`, its 22 random bits drawn from `rng`.
    public static func generate(irk: UInt128, using rng: inout some RandomNumberGenerator) -> UInt64 {
        var random: UInt32
        // The random part shall not be all zeros or all ones (Vol 6, Part B, 1.3.2.2).
        repeat {
            random = UInt32.random(in: 0...randomMask, using: &rng)
        } while random == 0 || random == randomMask
        let prand = 0x40_0000 | random
        return UInt64(prand) << 24 | UInt64(SecurityToolbox.ah(k: irk, r: prand))
    }

    /// A new resolvable private address for `irk`, drawn from the system's generator.
    public static func generate(irk: UInt128) -> UInt64 {
        var rng = SystemRandomNumberGenerator()
        return generate(irk: irk, using: &rng)
    }

    /// Whether `address` (48 bits) is a resolvable private address: its two most significant
    /// bits are 0b01.
    public static func isResolvable(_ address: UInt64) -> Bool {
        (address >> 46) & 0b11 == 0b01
    }

    /// Whether `address` resolves with `irk` (Vol 3, Part C, 10.8.2.3): its hash equals
    /// `ah(irk, prand)`.
    public static func resolves(_ address: UInt64, irk: UInt128) -> Bool {
        guard address >> 48 == 0, isResolvable(address) else { return false }
        let prand = UInt32(truncatingIfNeeded: address >> 24) & 0xFF_FFFF
        let hash = UInt32(truncatingIfNeeded: address) & 0xFF_FFFF
        return SecurityToolbox.ah(k: irk, r: prand) == hash
    }

    private static let randomMask: UInt32 = 0x3F_FFFF
}
