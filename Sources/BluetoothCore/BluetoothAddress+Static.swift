extension BluetoothAddress {
    /// The 46 random bits of a static address (all but the two most significant).
    private static let staticRandomPart: UInt64 = 0x3FFF_FFFF_FFFF

    /// Whether this is a valid static random address: the two most significant bits 11, and
    /// the other 46 bits neither all zeros nor all ones (Core 6.0, Vol 6, Part B, 1.3.2.1).
    public var isStaticRandom: Bool {
        let rest = rawValue & Self.staticRandomPart
        return rawValue >> 46 == 0b11 && rest != 0 && rest != Self.staticRandomPart
    }

    /// A new static random address from `generator`: 46 random bits that are neither all zeros
    /// nor all ones, under the two top bits 11 (Core 6.0, Vol 6, Part B, 1.3.2.1).
    public static func randomStatic<Generator: RandomNumberGenerator>(using generator: inout Generator) -> BluetoothAddress {
        let rest = UInt64.random(in: 1..<staticRandomPart, using: &generator)
        return BluetoothAddress(rawValue: 0b11 << 46 | rest)
    }

    /// A new static random address from the system's random number generator.
    public static func randomStatic() -> BluetoothAddress {
        var generator = SystemRandomNumberGenerator()
        return randomStatic(using: &generator)
    }
}
