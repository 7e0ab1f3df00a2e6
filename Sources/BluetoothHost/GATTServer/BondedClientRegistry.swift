import BluetoothCore
import DequeModule

/// What the GATT server holds in memory of bonded clients, by bond identity: the state each
/// left (``GATTBondedClientState``, also kept with the bond), and what happened while it was away
/// (no link encrypted with its bond's key): indications waiting for it, and the values updated
/// that it gets notified on its return where the characteristic asks for it. A plain value with
/// no I/O; the server drives it.
///
/// Bounded: ``capacity`` clients (the least recently seen away client is forgotten first; its
/// bond keeps its state), and ``maximumDeferredIndications`` per client (the oldest dropped and
/// counted).
struct BondedClientRegistry: Sendable {
    struct DeferredIndication: Sendable, Hashable {
        let handle: UInt16
        let value: [UInt8]
    }

    /// What a client finds when a link of it takes up its state.
    struct Arrival: Sendable {
        var state: GATTBondedClientState?
        /// Indications of values updated while it was away, oldest first.
        var deferredIndications: [DeferredIndication] = []
        /// Characteristics updated while it was away that notify their latest value on its
        /// return (``GATTCharacteristicDefinition/notifiesLatestValueOnReconnection``).
        var updatedWhileAway: Set<UInt16> = []
    }

    private struct Entry: Sendable {
        var state: GATTBondedClientState
        var deferred: Deque<DeferredIndication> = []
        var updatedWhileAway: Set<UInt16> = []
        /// Links that took up this state and are still up.
        var links = 0
        /// When it was last taken up or left, for eviction.
        var lastSeen: UInt64 = 0
    }

    let capacity: Int
    private var entries: [DeviceAddress: Entry] = [:]
    /// Away clients with a configuration of each characteristic value: who an update concerns.
    private var absentSubscribers: [UInt16: Set<DeviceAddress>] = [:]
    private var tick: UInt64 = 0
    /// Deferred indications dropped (past the bound, or with a client forgotten to make room)
    /// since the last ``takeDrops()``.
    private var droppedIndications = 0

    init(capacity: Int) { self.capacity = capacity }

    var count: Int { entries.count }

    /// The deferred indications dropped since the last call.
    mutating func takeDrops() -> Int {
        defer { droppedIndications = 0 }
        return droppedIndications
    }

    /// Whether the client's state is in memory.
    func knows(_ identity: DeviceAddress) -> Bool { entries[identity] != nil }

    /// The state kept for the client, if any.
    func state(of identity: DeviceAddress) -> GATTBondedClientState? { entries[identity]?.state }

    /// A link encrypted with the client's bond takes up its state: what it left (`loaded` from
    /// the bond when memory has none) and what it missed, which is handed over once.
    mutating func arrive(_ identity: DeviceAddress, loaded: GATTBondedClientState?) -> Arrival {
        tick += 1
        guard var entry = entries[identity] ?? loaded.map({ Entry(state: $0) }) else {
            insert(identity, Entry(state: GATTBondedClientState(), links: 1, lastSeen: tick))
            return Arrival(state: nil)
        }
        // Present now: an update no longer concerns it as an away client.
        if entries[identity] != nil, entry.links == 0 { unindex(identity, entry.state) }
        let arrival = Arrival(state: entry.state, deferredIndications: Array(entry.deferred), updatedWhileAway: entry.updatedWhileAway)
        entry.deferred = []
        entry.updatedWhileAway = []
        entry.links += 1
        entry.lastSeen = tick
        insert(identity, entry)
        return arrival
    }

    /// The client's state changed on a link that holds it (its configurations, its features).
    mutating func update(_ identity: DeviceAddress, state: GATTBondedClientState) {
        guard var entry = entries[identity] else { return }
        if entry.links == 0 { unindex(identity, entry.state) }
        entry.state = state
        if entry.links == 0 { index(identity, state) }
        entries[identity] = entry
    }

    /// A link that took up the client's state closed, leaving `state` (`nil`: the link no longer
    /// counted as the bond's, and left nothing new). With no link left the client is away.
    mutating func leave(_ identity: DeviceAddress, state: GATTBondedClientState?) {
        guard var entry = entries[identity] else { return }
        tick += 1
        if let state { entry.state = state }
        entry.links = max(0, entry.links - 1)
        entry.lastSeen = tick
        entries[identity] = entry
        if entry.links == 0 { index(identity, entry.state) }
    }

    /// A state read from the bond store (at power-on), for a client not in memory: its
    /// subscriptions count from now on for values updated while it is away.
    mutating func preload(_ identity: DeviceAddress, state: GATTBondedClientState) {
        guard entries[identity] == nil, entries.count < capacity else { return }
        tick += 1
        entries[identity] = Entry(state: state, lastSeen: tick)
        index(identity, state)
    }

    /// Forgets the client (its bond is gone, or was replaced).
    mutating func forget(_ identity: DeviceAddress) {
        guard let entry = entries.removeValue(forKey: identity) else { return }
        unindex(identity, entry.state)
    }

    /// A characteristic value changed: each away client subscribed to it gets an indication
    /// queued (when it asked for indications) or, when the characteristic notifies its latest
    /// value on reconnection, a mark. Returns the clients that will get the value on their
    /// return. Costs one lookup when no away client subscribed to it.
    mutating func valueChanged(_ value: [UInt8], handle: UInt16, notifiesLatestValueOnReconnection: Bool,
                               maximumDeferredIndications: Int) -> [DeviceAddress] {
        guard let identities = absentSubscribers[handle] else { return [] }
        var concerned: [DeviceAddress] = []
        for identity in identities.sorted(by: Self.order) {
            guard var entry = entries[identity],
                  let configuration = entry.state.subscriptions.first(where: { $0.valueHandle == handle })?.configuration else { continue }
            if configuration.contains(.indication) {
                guard maximumDeferredIndications > 0 else { continue }
                if entry.deferred.count >= maximumDeferredIndications {
                    entry.deferred.removeFirst()
                    droppedIndications += 1
                }
                entry.deferred.append(DeferredIndication(handle: handle, value: value))
            } else if notifiesLatestValueOnReconnection {
                entry.updatedWhileAway.insert(handle)
            } else {
                continue
            }
            entries[identity] = entry
            concerned.append(identity)
        }
        return concerned
    }

    /// Characteristics removed from the database: what was kept for them goes.
    mutating func removeHandles(in range: ClosedRange<UInt16>) {
        for (identity, var entry) in entries {
            let wasIndexed = entry.links == 0
            if wasIndexed { unindex(identity, entry.state) }

            entry.state.subscriptions.removeAll { range.contains($0.valueHandle) }
            entry.deferred.removeAll { range.contains($0.handle) }
            entry.updatedWhileAway = entry.updatedWhileAway.filter { !range.contains($0) }
            if wasIndexed { index(identity, entry.state) }
            entries[identity] = entry
        }
    }

    // MARK: Bookkeeping

    private mutating func insert(_ identity: DeviceAddress, _ entry: Entry) {
        if entries[identity] == nil, entries.count >= capacity { evict() }
        entries[identity] = entry
    }

    /// Forgets the away client seen least recently (none while every one has a link: then the
    /// table grows by one, bounded by the links the controller holds).
    private mutating func evict() {
        guard let (identity, entry) = entries.filter({ $0.value.links == 0 }).min(by: { $0.value.lastSeen < $1.value.lastSeen }) else { return }
        droppedIndications += entry.deferred.count
        forget(identity)
    }

    private mutating func index(_ identity: DeviceAddress, _ state: GATTBondedClientState) {
        for subscription in state.subscriptions where !subscription.configuration.isEmpty {
            absentSubscribers[subscription.valueHandle, default: []].insert(identity)
        }
    }

    private mutating func unindex(_ identity: DeviceAddress, _ state: GATTBondedClientState) {
        for subscription in state.subscriptions {
            absentSubscribers[subscription.valueHandle]?.remove(identity)
            if absentSubscribers[subscription.valueHandle]?.isEmpty == true { absentSubscribers[subscription.valueHandle] = nil }
        }
    }

    private static func order(_ lhs: DeviceAddress, _ rhs: DeviceAddress) -> Bool {
        (lhs.address.rawValue, lhs.type.rawValue) < (rhs.address.rawValue, rhs.type.rawValue)
    }
}
