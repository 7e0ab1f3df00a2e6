/// Random values for one pairing: nonces, the passkey, distributed keys. Cryptographically
/// secure by default; tests give a seeded generator to replay a pairing.
struct PairingRandom {
    private var generator: any RandomNumberGenerator

    init(_ generator: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.generator = generator
    }

    mutating func next128() -> UInt128 {
        UInt128(generator.next() as UInt64) << 64 | UInt128(generator.next() as UInt64)
    }

    mutating func next64() -> UInt64 { generator.next() }

    mutating func next16() -> UInt16 { UInt16(truncatingIfNeeded: generator.next() as UInt64) }

    /// A passkey, 0…999999 (Vol 3, Part H, 2.3.5.3), uniformly.
    mutating func passkey() -> UInt32 {
        UInt32(Int.random(in: 0...999_999, using: &generator))
    }
}
