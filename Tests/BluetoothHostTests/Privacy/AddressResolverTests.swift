import BluetoothCore
import BluetoothCrypto
@testable import BluetoothHost
import Synchronization
import Testing

/// Resolving private addresses with bonds' IRKs: the spec's sample resolves to its identity,
/// each address costs `ah` once whether it resolves or not, the cache stays bounded and is
/// cleared when the bonds change.
@Suite("Address resolution", .timeLimit(.minutes(1)))
struct AddressResolverTests {
    /// Core 6.0, Vol 3, Part H, Appendix D.7: IRK ec0234a3 57c8ad05 341010a6 0a397d9b,
    /// prand 0x708194, hash 0x0dfbaa.
    static let sampleIRK: UInt128 = 0xEC02_34A3_57C8_AD05_3410_10A6_0A39_7D9B
    static let sampleRPA = DeviceAddress(BluetoothAddress(rawValue: 0x7081_940D_FBAA), type: .random)
    static let identity = DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0001), type: .public)

    /// An address that resolves with none of the test IRKs: the sample with a wrong hash.
    static func stranger(_ index: UInt64) -> DeviceAddress {
        DeviceAddress(BluetoothAddress(rawValue: 0x4000_0000_0000 | index << 24 | 0x12_3456), type: .random)
    }

    /// Hundreds of bonds whose IRKs resolve nothing here.
    static func otherKeys(_ count: Int) -> [DeviceAddress: UInt128] {
        Dictionary(uniqueKeysWithValues: (0..<count).map { index in
            (DeviceAddress(BluetoothAddress(rawValue: 0xD000_0000_0000 | UInt64(index)), type: .random), UInt128(index + 1))
        })
    }

    @Test func theSpecSampleResolvesToItsIdentityOnceThenFromTheCache() {
        let resolver = AddressResolver()
        var keys = Self.otherKeys(300)
        keys[Self.identity] = Self.sampleIRK
        resolver.setKeys(keys)
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        let first = resolver.evaluations
        #expect(first >= 1 && first <= 301)
        for _ in 0..<100 { #expect(resolver.identity(of: Self.sampleRPA) == Self.identity) }
        #expect(resolver.evaluations == first, "a cached hit runs no AES")
        #expect(resolver.currentAddress(of: Self.identity) == Self.sampleRPA)
        #expect(resolver.currentAddress(of: Self.stranger(1)) == Self.stranger(1))
    }

    @Test func aMissCostsOneAhPerIRKOnceThenComesFromTheCache() {
        let resolver = AddressResolver()
        resolver.setKeys(Self.otherKeys(300))
        #expect(resolver.identity(of: Self.stranger(1)) == nil)
        #expect(resolver.evaluations == 300)
        for _ in 0..<1000 { #expect(resolver.identity(of: Self.stranger(1)) == nil) }
        #expect(resolver.evaluations == 300, "a cached miss runs no AES")
        #expect(resolver.identity(of: Self.stranger(2)) == nil)
        #expect(resolver.evaluations == 600)
    }

    @Test func addressesThatAreNotResolvableCostNothing() {
        let resolver = AddressResolver()
        resolver.setKeys([Self.identity: Self.sampleIRK])
        let publicAddress = DeviceAddress(BluetoothAddress(rawValue: 0x7081_940D_FBAA), type: .public)
        let staticRandom = DeviceAddress(BluetoothAddress(rawValue: 0xF081_940D_FBAA), type: .random)
        let nonResolvable = DeviceAddress(BluetoothAddress(rawValue: 0x3081_940D_FBAA), type: .random)
        for address in [publicAddress, staticRandom, nonResolvable] { #expect(resolver.identity(of: address) == nil) }
        #expect(resolver.evaluations == 0)
        #expect(resolver.cachedAddresses == 0)
        // A controller that resolved the address reports the identity with type 0x02 or 0x03.
        let resolvedByController = DeviceAddress(Self.identity.address, type: .publicIdentity)
        #expect(resolver.identity(of: resolvedByController) == Self.identity)
        // With no bonds nothing is computed or cached.
        let empty = AddressResolver()
        #expect(empty.identity(of: Self.sampleRPA) == nil)
        #expect(empty.evaluations == 0 && empty.cachedAddresses == 0)
    }

    @Test func theCacheStaysWithinItsBoundForgettingTheLeastRecentlyUsed() {
        let resolver = AddressResolver(cacheLimit: 64)
        resolver.setKeys([Self.identity: Self.sampleIRK])
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        for index in 0..<10_000 as Range<UInt64> {
            #expect(resolver.identity(of: Self.stranger(index)) == nil)
            if index % 50 == 0 { _ = resolver.identity(of: Self.sampleRPA) }  // kept recent
            #expect(resolver.cachedAddresses <= 64)
        }
        let evaluations = resolver.evaluations
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        #expect(resolver.evaluations == evaluations, "the recently used hit is still cached")
        #expect(resolver.identity(of: Self.stranger(0)) == nil)
        #expect(resolver.evaluations == evaluations + 1, "the oldest miss was forgotten and resolved again")
    }

    @Test func bondChangesInvalidateTheCache() {
        let resolver = AddressResolver()
        resolver.setKeys(Self.otherKeys(3))
        // A miss before the bond exists...
        #expect(resolver.identity(of: Self.sampleRPA) == nil)
        // ...resolves once the bond is added.
        resolver.add(identity: Self.identity, irk: Self.sampleIRK)
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        // A hit is gone once the bond is removed, and so is the address the identity was seen at.
        resolver.remove(identity: Self.identity)
        #expect(resolver.identity(of: Self.sampleRPA) == nil)
        #expect(resolver.currentAddress(of: Self.identity) == Self.identity)
        // Replacing every key (power-on) clears the cache too.
        resolver.setKeys([Self.identity: Self.sampleIRK])
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
    }

    @Test func rotatedAddressesOfOneIRKAllResolveToTheSameIdentity() {
        let resolver = AddressResolver()
        var keys = Self.otherKeys(10)
        keys[Self.identity] = Self.sampleIRK
        resolver.setKeys(keys)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20 {
            let rotated = DeviceAddress(BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: Self.sampleIRK, using: &rng)), type: .random)
            #expect(resolver.identity(of: rotated) == Self.identity)
            #expect(resolver.currentAddress(of: Self.identity) == rotated)
        }
    }

    /// The controller resolves the identities of its resolving list: the host tries only the
    /// other IRKs, and takes an identity the controller reports (as type 0x02/0x03, or, as
    /// Rootcanal 1.10.0 does, 0x00/0x01) as resolved.
    @Test func identitiesTheControllerResolvesCostTheHostNothing() {
        let resolver = AddressResolver()
        var keys = Self.otherKeys(10)
        keys[Self.identity] = Self.sampleIRK
        resolver.setKeys(keys)
        resolver.setControllerResolved([Self.identity])
        #expect(resolver.controllerResolvedIdentities == [Self.identity])
        #expect(resolver.identity(of: Self.stranger(1)) == nil)
        #expect(resolver.evaluations == 10, "the IRK the controller holds is not tried")
        #expect(resolver.identity(of: Self.identity) == Self.identity, "reported with its base type by a controller that resolved it")
        #expect(resolver.identity(of: DeviceAddress(Self.identity.address, type: .publicIdentity)) == Self.identity)
        let unlisted = DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0002), type: .public)
        #expect(resolver.identity(of: unlisted) == nil)
        #expect(resolver.evaluations == 10)
        // Back to the host: the cache of misses is dropped, the sample resolves here again.
        resolver.setControllerResolved([])
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        #expect(resolver.identity(of: Self.identity) == nil, "an identity address is not resolved by the host")
    }

    /// A link's address stands for the identity learned on it, whatever resolved it, until the
    /// link ends; bond changes (which clear the cache) do not forget it.
    @Test func aLinksAddressKeepsItsIdentityForTheLinksLife() {
        let resolver = AddressResolver()
        resolver.setKeys([Self.identity: Self.sampleIRK])
        resolver.setControllerResolved([Self.identity])
        resolver.linkUp(at: Self.sampleRPA, identity: Self.identity)
        resolver.add(identity: Self.stranger(5), irk: 1)
        #expect(resolver.identity(of: Self.sampleRPA) == Self.identity)
        #expect(resolver.evaluations == 0)
        resolver.linkEnded(at: Self.sampleRPA)
        #expect(resolver.identity(of: Self.sampleRPA) == nil, "the controller holds that IRK; the host does not try it")
    }

    /// Network privacy mode: a bonded peer with an IRK is ignored at its identity address,
    /// unless the controller resolves it (and then does the filtering itself).
    @Test func networkPrivacyModeIgnoresIdentityAddressesOfPeersWithIRK() {
        let resolver = AddressResolver()
        resolver.setKeys([Self.identity: Self.sampleIRK])
        #expect(!resolver.ignores(Self.identity), "device privacy mode by default")
        resolver.setIgnoresIdentityAddressesWithIRK(true)
        #expect(resolver.ignores(Self.identity))
        #expect(!resolver.ignores(Self.sampleRPA))
        #expect(!resolver.ignores(DeviceAddress(BluetoothAddress(rawValue: 0xC0FF_EE00_0002), type: .public)), "not bonded")
        resolver.setControllerResolved([Self.identity])
        #expect(!resolver.ignores(Self.identity), "reported by a controller that resolved it")
    }

    /// Someone waiting to hear an identity is told of a private address that resolves to it, and
    /// of the identity address itself only when it accepts that.
    @Test func watchersHearTheirIdentity() {
        let resolver = AddressResolver()
        resolver.setKeys([Self.identity: Self.sampleIRK])
        let heard = Mutex<[DeviceAddress]>([])
        resolver.noteSighting(Self.sampleRPA)
        #expect(resolver.evaluations == 0, "nobody watches: nothing is resolved")
        let watch = resolver.watch(for: Self.identity, acceptingIdentityAddress: false) { address in heard.withLock { $0.append(address) } }
        resolver.noteSighting(Self.stranger(1))
        resolver.noteSighting(Self.identity)
        resolver.noteSighting(Self.sampleRPA)
        #expect(heard.withLock { $0 } == [Self.sampleRPA])
        resolver.stopWatching(watch)
        let lenient = resolver.watch(for: Self.identity, acceptingIdentityAddress: true) { address in heard.withLock { $0.append(address) } }
        resolver.noteSighting(Self.identity)
        #expect(heard.withLock { $0 } == [Self.sampleRPA, Self.identity])
        resolver.stopWatching(lenient)
        resolver.noteSighting(Self.sampleRPA)
        #expect(heard.withLock { $0 }.count == 2)
    }
}
