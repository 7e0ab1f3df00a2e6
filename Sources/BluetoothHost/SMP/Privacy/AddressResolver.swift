import BluetoothCore
import BluetoothCrypto
import Synchronization

/// Resolves peers' resolvable private addresses to their identity addresses with the IRKs of
/// the bonds (Core 6.0, Vol 3, Part C, 10.8.2.3), cheaply enough to run for every
/// advertisement a scan reports: each address is resolved once (one `ah` per IRK), then its
/// answer, hit or miss, comes from a bounded `ResolutionCache`, cleared when the bonds change.
///
/// The IRKs of identities the controller's resolving list holds are not tried here
/// (``controllerResolvedIdentities``): the controller resolves those addresses before the
/// host sees them, so trying them again would only cost `ah` per stranger. Addresses of links
/// whose identity is known (resolved by either) are remembered for as long as the link lasts.
///
/// Readable from any thread (the scan receiver runs on the transport's reader thread). It also
/// remembers the latest private address each bonded identity was seen at.
public final class AddressResolver: Sendable {
    private struct State {
        var keys: [DeviceAddress: UInt128] = [:]
        var cache: ResolutionCache
        /// Per identity, the private address it was last seen at.
        var latest: [DeviceAddress: DeviceAddress] = [:]
        var evaluations = 0
        /// Identities the controller resolves: their IRKs are not tried here.
        var controllerResolved: Set<DeviceAddress> = []
        /// The over-the-air addresses of links whose peer's identity is known.
        var links: [BluetoothAddress: DeviceAddress] = [:]
        /// Who waits to hear of an identity (``watch(for:acceptingIdentityAddress:_:)``).
        var watchers: [UInt64: Watcher] = [:]
        var nextWatcherID: UInt64 = 0
        /// A bonded peer that distributed an IRK is ignored at its identity address over the
        /// air (network privacy mode, Core 6.0, Vol 6, Part B, 4.7).
        var ignoresIdentityAddressesWithIRK = false
    }

    private struct Watcher {
        var identity: DeviceAddress
        var acceptsIdentityAddress: Bool
        var found: @Sendable (DeviceAddress) -> Void
    }

    private let state: Mutex<State>
    /// Whether anyone watches for sightings: the scan receiver asks before resolving a report.
    private let hasWatchers = Atomic<Bool>(false)
    /// Whether the controller resolves any identity: only then are identity addresses looked up.
    private let hasControllerResolved = Atomic<Bool>(false)

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

    /// The bonded identities whose private addresses the controller resolves (its resolving
    /// list, with address resolution on); the host tries the IRKs of the others only.
    public var controllerResolvedIdentities: Set<DeviceAddress> { state.withLock { $0.controllerResolved } }

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

    /// A bonded identity other than `identity` whose IRK is `irk`, if there is one.
    public func identity(havingIRK irk: UInt128, besides identity: DeviceAddress) -> DeviceAddress? {
        let identity = Self.identity(identity)
        return state.withLock { state in state.keys.first { $0.value == irk && $0.key != identity }?.key }
    }

    /// Whether `identity` is a bonded identity with an IRK here.
    public func hasKey(for identity: DeviceAddress) -> Bool {
        state.withLock { $0.keys[Self.identity(identity)] != nil }
    }

    /// The identities the controller resolves from now on (see ``controllerResolvedIdentities``).
    func setControllerResolved(_ identities: Set<DeviceAddress>) {
        let identities = Set(identities.map(Self.identity))
        state.withLock { state in
            guard identities != state.controllerResolved else { return }
            state.controllerResolved = identities
            // A miss may have been a miss only because those IRKs were left out, or the other
            // way round.
            state.cache.removeAll()
        }
        hasControllerResolved.store(!identities.isEmpty, ordering: .relaxed)
    }

    /// Whether the controller resolves `identity` (an identity address as reported).
    private func controllerResolves(_ identity: DeviceAddress) -> Bool {
        guard hasControllerResolved.load(ordering: .relaxed) else { return false }
        return state.withLock { $0.controllerResolved.contains(identity) }
    }

    /// Whether a bonded peer that distributed an IRK is ignored at its identity address over
    /// the air (network privacy mode).
    func setIgnoresIdentityAddressesWithIRK(_ ignores: Bool) {
        state.withLock { $0.ignoresIdentityAddressesWithIRK = ignores }
    }

    /// Whether an advertisement from `address` is to be ignored: in network privacy mode, the
    /// identity address of a bonded peer that distributed an IRK (Core 6.0, Vol 3, Part C,
    /// 10.7). The controller does that itself for the peers in its resolving list (and some,
    /// Rootcanal 1.10.0 among them, report an address they resolved with type 0x00 or 0x01,
    /// which must not be taken for the identity address over the air).
    func ignores(_ address: DeviceAddress) -> Bool {
        guard address.type == .public || address.type == .random else { return false }
        return state.withLock { state in
            state.ignoresIdentityAddressesWithIRK && state.keys[address] != nil && !state.controllerResolved.contains(address)
        }
    }

    /// A link to the peer at `address` (over the air) is up, and its identity is known: the
    /// address stands for `identity` until ``linkEnded(at:)``, whoever resolved it.
    func linkUp(at address: DeviceAddress, identity: DeviceAddress) {
        guard address.address != identity.address else { return }
        state.withLock { $0.links[address.address] = Self.identity(identity) }
    }

    /// The link at `address` ended.
    func linkEnded(at address: DeviceAddress) {
        state.withLock { _ = $0.links.removeValue(forKey: address.address) }
    }

    /// The identity address of a peer seen at `address`: the address itself with its base type
    /// when a controller already resolved it (types 0x02 and 0x03), the identity of a link up
    /// at that address, the bonded identity whose IRK resolves it when it is a resolvable
    /// private address, else `nil`.
    ///
    /// An identity address the controller resolves is its own identity too: a controller may
    /// report a peer it resolved with type 0x00 or 0x01 (Rootcanal 1.10.0 does).
    public func identity(of address: DeviceAddress) -> DeviceAddress? {
        switch address.type {
        case .publicIdentity, .randomIdentity: return Self.identity(address)
        case .public: return controllerResolves(address) ? address : nil
        case .random: break
        }
        let raw = address.address.rawValue
        guard ResolvablePrivateAddress.isResolvable(raw) else { return controllerResolves(address) ? address : nil }
        return state.withLock { state -> DeviceAddress? in
            if let linked = state.links[address.address] { return linked }
            guard !state.keys.isEmpty else { return nil }
            let found: DeviceAddress?
            if let cached = state.cache.answer(for: address.address) {
                found = cached
            } else {
                var match: DeviceAddress?
                for (identity, irk) in state.keys where !state.controllerResolved.contains(identity) {
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

    /// Where `peer` was last seen: the private address its identity was last resolved from,
    /// when `peer` is a bonded identity seen at one; else `peer` unchanged. (Connecting to an
    /// identity does not use it: the peer may have changed its address since.)
    public func currentAddress(of peer: DeviceAddress) -> DeviceAddress {
        state.withLock { $0.latest[Self.identity(peer)] } ?? peer
    }

    // MARK: Sightings

    /// Calls `found` with the address over the air of the next advertising report from
    /// `identity`: a private address that resolves to it here or in the controller (reported
    /// with the identity and type 0x02 or 0x03), or, with `acceptingIdentityAddress`, its
    /// identity address itself. Called on the transport's reader thread, once per report until
    /// ``stopWatching(_:)``. Returns the watch's identifier.
    func watch(for identity: DeviceAddress, acceptingIdentityAddress: Bool, _ found: @escaping @Sendable (DeviceAddress) -> Void) -> UInt64 {
        let id = state.withLock { state -> UInt64 in
            state.nextWatcherID += 1
            state.watchers[state.nextWatcherID] = Watcher(identity: Self.identity(identity), acceptsIdentityAddress: acceptingIdentityAddress,
                                                          found: found)
            return state.nextWatcherID
        }
        hasWatchers.store(true, ordering: .relaxed)
        return id
    }

    func stopWatching(_ id: UInt64) {
        let empty = state.withLock { state -> Bool in
            state.watchers[id] = nil
            return state.watchers.isEmpty
        }
        if empty { hasWatchers.store(false, ordering: .relaxed) }
    }

    /// An advertising report from `address` (over the air, or as the controller resolved it)
    /// was received: tells whoever watches for its identity. Costs nothing while nobody does.
    func noteSighting(_ address: DeviceAddress) {
        guard hasWatchers.load(ordering: .relaxed) else { return }
        let resolved = identity(of: address)
        let told = state.withLock { state -> [@Sendable (DeviceAddress) -> Void] in
            state.watchers.values.filter { watcher in
                resolved == watcher.identity || (watcher.acceptsIdentityAddress && Self.identity(address) == watcher.identity)
            }.map(\.found)
        }
        told.forEach { $0(address) }
    }

    private static func identity(_ address: DeviceAddress) -> DeviceAddress {
        DeviceAddress(address.address, type: address.type.base)
    }
}
