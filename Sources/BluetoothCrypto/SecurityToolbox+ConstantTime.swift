/// Comparing secrets in constant time: confirm values, DHKey checks and signatures are checked
/// without a branch on where they first differ, so the time of a refusal tells a peer nothing
/// about how close its guess was (as BlueZ's `crypto_memneq` and Zephyr's `memcmp`-free checks).
extension SecurityToolbox {
    /// Whether `a` equals `b`, in time independent of their values.
    @inline(never)
    public static func constantTimeEqual(_ a: UInt128, _ b: UInt128) -> Bool {
        let difference = a ^ b
        // Both halves folded into one word and tested once: no early exit on the high half.
        let folded = UInt64(truncatingIfNeeded: difference) | UInt64(truncatingIfNeeded: difference >> 64)
        return folded == 0
    }

    /// Whether `a` equals `b` (one machine word: a single comparison).
    @inline(never)
    public static func constantTimeEqual(_ a: UInt64, _ b: UInt64) -> Bool {
        (a ^ b) == 0
    }

    /// Whether `a` equals `b`, in time that depends on their lengths only (which are public).
    @inline(never)
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
