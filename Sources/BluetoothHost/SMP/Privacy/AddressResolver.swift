import BluetoothCore
import BluetoothCrypto
import Synchronization

/// Resolves peers' resolvable private addresses to their identity addresses with the IRKs of
/// the bonds (Core 6.0, Vol 3, Part C, 10.8.2.3), cheaply enough to run for every
/// advertisement a scan reports: each address is resolved once (one `ah` per IRK), then its
/// answer, hit or miss, comes from a bounded `ResolutionCache`, cleared when the bonds change.
///
/// Readable from any thread (the scan receiver runs on the transport's reader thread). It also
/// remembers the latest private address each bonded identity was seen at, so that a connection
/// to the identity can be made to the address the peer uses now.
public final class AddressResolver: Sendable {
    private struct State {
        var keys: [DeviceAddress: UInt128] = [:]
        var cache: ResolutionCache
        /// Per identity, the private address it was last seen at.
        var latest: [DeviceAddress: DeviceAddress] = [:]
        var evaluations = 0
    }

    private let state: Mutex<State>

    /// The default bound of the cache: answers for this many addresses.
    public static let defaultCacheLimit = 4096

    public init(cacheLimit: Int = AddressResolver.defaultCacheLimit) {
        state = Mutex(State(cache: ResolutionCache(limit: cacheLimit)))
    }

    /// How many `ah` computations resolving has run (one per IRK tried), for tests and logs.
    public var evaluations: Int { state.withLock { $0.evaluations } }

    /// How many addresses have a cached answer.
    public var cachedAddresses: Int { state.withLock { $0.cache.count } }

    /// How many identities have an IRK here.
    public var identityCount: Int { state.withLock { $0.keys.count } }

    /// Replaces every IRK (at power-on, from the bond store).
    public func setKeys(_ keys: [DeviceAddress: UInt128]) {
        state.withLock { state in
            state.keys = Dictionary(keys.map { (Self.identity($0.key), $0.value) }, uniquingKeysWith: { _, last in last })
            state.cache.removeAll()
            state.latest = state.latest.filter { state.keys[$0.key] != nil }
        }
    }

    /// Adds or replaces the IRK of a bonded identity.
    public func add(identity: DeviceAddress, irk: UInt128) {
        state.withLock { state in
            state.keys[Self.identity(identity)] = irk
            state.cache.removeAll()
        }
    }

    /// Forgets an identity's IRK (its bond was removed).
    public func remove(identity: DeviceAddress) {
        let identity = Self.identity(identity)
        state.withLock { state in
            guard state.keys.removeValue(forKey: identity) != nil else { return }
            state.cache.removeAll()
            state.latest[identity] = nil
        }
    }

    /// The identity address of a peer seen at `address`: the address itself with its base type
    /// when a controller already resolved it (types 0x02 and 0x03), the bonded identity whose
    /// IRK resolves it when it is a resolvable private address, else `nil`.
    public func identity(of address: DeviceAddress) -> DeviceAddress? {
        switch address.type {
        case .publicIdentity, .randomIdentity: return Self.identity(address)
        case .public: return nil
        case .random: break
        }
        let raw = address.address.rawValue
        guard ResolvablePrivateAddress.isResolvable(raw) else { return nil }
        return state.withLock { state -> DeviceAddress? in
            guard !state.keys.isEmpty else { return nil }
            let found: DeviceAddress?
            if let cached = state.cache.answer(for: address.address) {
                found = cached
            } else {
                var match: DeviceAddress?
                for (identity, irk) in state.keys {
                    state.evaluations += 1
                    if ResolvablePrivateAddress.resolves(raw, irk: irk) {
                        match = identity
                        break
                    }
                }
                found = match
                state.cache.store(found, for: address.address)
            }
            if let found { state.latest[found] = DeviceAddress(address.address, type: .random) }
            return found
        }
    }

    /// Where to reach `peer` now: the private address its identity was last seen at, when
    /// `peer` is a bonded identity seen from one; else `peer` unchanged.
    public func currentAddress(of peer: DeviceAddress) -> DeviceAddress {
        state.withLock { $0.latest[Self.identity(peer)] } ?? peer
    }

    private static func identity(_ address: DeviceAddress) -> DeviceAddress {
        DeviceAddress(address.address, type: address.type.base)
    }
}
