import BluetoothCore
import BluetoothCrypto
import Testing

@Suite("Resolvable private address", .timeLimit(.minutes(1)))
struct ResolvablePrivateAddressTests {
    let irk = SampleData.key

    /// Appendix D.7's ah sample as an address: prand 0x708194, hash 0x0dfbaa.
    @Test func theSpecSampleResolves() {
        #expect(ResolvablePrivateAddress.isResolvable(0x7081_940D_FBAA))
        #expect(ResolvablePrivateAddress.resolves(0x7081_940D_FBAA, irk: irk))
        #expect(!ResolvablePrivateAddress.resolves(0x7081_940D_FBAB, irk: irk))
    }

    @Test func generatedAddressesResolveWithTheirIRKOnly() {
        var rng = SeededRandomNumberGenerator(seed: 7)
        let other = irk ^ 1
        for _ in 0..<200 {
            let address = ResolvablePrivateAddress.generate(irk: irk, using: &rng)
            #expect(address >> 48 == 0)
            #expect(address >> 46 == 0b01)
            let random = (address >> 24) & 0x3F_FFFF
            #expect(random != 0 && random != 0x3F_FFFF)
            #expect(ResolvablePrivateAddress.isResolvable(address))
            #expect(ResolvablePrivateAddress.resolves(address, irk: irk))
            #expect(!ResolvablePrivateAddress.resolves(address, irk: other))
        }
        let system = ResolvablePrivateAddress.generate(irk: irk)
        #expect(ResolvablePrivateAddress.resolves(system, irk: irk))
    }

    /// An address whose top bits are not 0b01 is not resolvable, even when its low half is the
    /// hash of its high half.
    @Test func onlyTopBits01AreResolvable() {
        let prand: UInt32 = 0xF0_8194  // 0b11: a static random address
        let address = UInt64(prand) << 24 | UInt64(SecurityToolbox.ah(k: irk, r: prand))
        #expect(!ResolvablePrivateAddress.isResolvable(address))
        #expect(!ResolvablePrivateAddress.resolves(address, irk: irk))
        #expect(!ResolvablePrivateAddress.isResolvable(0x3081_940D_FBAA))  // 0b00: non-resolvable
        // A value wider than 48 bits is no address.
        #expect(!ResolvablePrivateAddress.resolves(1 << 48 | 0x7081_940D_FBAA, irk: irk))
    }
}
