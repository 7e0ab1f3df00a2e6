import BluetoothCore
import BluetoothHCI

/// The controller's resolving list as the host keeps it in step with the bonds (Core 6.0,
/// Vol 4, Part E, 7.8.38-7.8.45 and 7.8.77; Vol 6, Part B, 4.7): the bonded identities whose
/// IRK the controller holds, and so resolves, and those it has no room for, which the host
/// resolves itself. A plain value: `LEHost+ResolvingList.swift` sends the commands it asks for.
///
/// Entries go in the order the bonds were made and stay until their bond is removed: a full
/// list keeps the identities it has, and a later bond is resolved by the host until a slot
/// frees.
struct ResolvingListState: Sendable {
    /// One command that brings the controller closer to what the host wants.
    enum Change: Sendable, Equatable, CustomStringConvertible {
        /// LE Clear Resolving List: at power-on, whatever a previous host left.
        case clear
        /// LE Add Device To Resolving List, then LE Set Privacy Mode for the entry.
        case add(identity: DeviceAddress, irk: UInt128)
        /// LE Remove Device From Resolving List.
        case remove(DeviceAddress)
        /// LE Set Address Resolution Enable (on).
        case enableResolution

        var description: String {
            switch self {
            case .clear: return "clear the resolving list"
            case let .add(identity, _): return "add \(identity) to the resolving list"
            case let .remove(identity): return "remove \(identity) from the resolving list"
            case .enableResolution: return "enable address resolution"
            }
        }
    }

    /// How many entries the controller holds (LE Read Resolving List Size), lowered when it
    /// refuses an entry with Memory Capacity Exceeded.
    private(set) var capacity: Int
    /// The bonded identities with an IRK, in the order they were bonded.
    private var wanted: [(identity: DeviceAddress, irk: UInt128)] = []
    /// What the controller holds.
    private(set) var entries: [DeviceAddress: UInt128] = [:]
    private var needsClear = true
    private(set) var isResolutionEnabled = false

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// The identities the controller resolves now: in its list, with resolution on.
    var controllerResolved: Set<DeviceAddress> {
        isResolutionEnabled ? Set(entries.keys) : []
    }

    /// Whether the controller resolves `identity`'s private addresses.
    func resolves(_ identity: DeviceAddress) -> Bool {
        isResolutionEnabled && entries[Self.base(identity)] != nil
    }

    /// The bonded identities the list has no room for: the host resolves them.
    var overflow: [DeviceAddress] {
        wanted.map(\.identity).filter { entries[$0] == nil }
    }

    /// Replaces what the host wants (the bonds were loaded, oldest first): identities already
    /// wanted keep their place, new ones follow in the order given.
    mutating func setWanted(_ bonds: [(identity: DeviceAddress, irk: UInt128)]) {
        var seen: Set<DeviceAddress> = []
        let fresh = bonds.map { (identity: Self.base($0.identity), irk: $0.irk) }.filter { seen.insert($0.identity).inserted }
        let order = Dictionary(wanted.enumerated().map { ($1.identity, $0) }, uniquingKeysWith: { first, _ in first })
        // `sorted` is stable: the new ones stay in the order given.
        wanted = fresh.sorted { (order[$0.identity] ?? Int.max) < (order[$1.identity] ?? Int.max) }
    }

    /// A bond with an IRK was made (or its IRK replaced).
    mutating func add(identity: DeviceAddress, irk: UInt128) {
        let identity = Self.base(identity)
        if let index = wanted.firstIndex(where: { $0.identity == identity }) {
            wanted[index].irk = irk
        } else {
            wanted.append((identity, irk))
        }
    }

    /// A bond was removed.
    mutating func remove(identity: DeviceAddress) {
        let identity = Self.base(identity)
        wanted.removeAll { $0.identity == identity }
    }

    /// The next command to send, or `nil` when the controller holds what the host wants:
    /// a clear after power-on, then removals (stale entries, replaced IRKs) before additions,
    /// additions in bond order while there is room, and resolution on last.
    func nextChange() -> Change? {
        if needsClear { return .clear }
        let wantedKeys = Dictionary(wanted.map { ($0.identity, $0.irk) }, uniquingKeysWith: { first, _ in first })
        if let stale = entries.first(where: { wantedKeys[$0.key] != $0.value }) { return .remove(stale.key) }
        if entries.count < capacity, let next = wanted.first(where: { entries[$0.identity] == nil }) {
            return .add(identity: next.identity, irk: next.irk)
        }
        return isResolutionEnabled ? nil : .enableResolution
    }

    /// Whether ``nextChange()`` has something to send.
    var isInStep: Bool { nextChange() == nil }

    /// The controller accepted `change`.
    mutating func didApply(_ change: Change) {
        switch change {
        case .clear:
            needsClear = false
            entries = [:]
        case let .add(identity, irk): entries[identity] = irk
        case let .remove(identity): entries[identity] = nil
        case .enableResolution: isResolutionEnabled = true
        }
    }

    /// The controller refused to add an entry for want of room (Memory Capacity Exceeded):
    /// it holds no more than it has now.
    mutating func controllerIsFull() {
        capacity = entries.count
    }

    /// The controller refused a removal because it has no such entry (Unknown Connection
    /// Identifier, Core 6.0, Vol 4, Part E, 7.8.39): it does not hold it.
    mutating func controllerLacks(_ identity: DeviceAddress) {
        entries[identity] = nil
    }

    /// The controller was reset: its list is empty and resolution off.
    mutating func controllerWasReset() {
        entries = [:]
        isResolutionEnabled = false
        needsClear = false
    }

    private static func base(_ address: DeviceAddress) -> DeviceAddress {
        DeviceAddress(address.address, type: address.type.base)
    }
}
