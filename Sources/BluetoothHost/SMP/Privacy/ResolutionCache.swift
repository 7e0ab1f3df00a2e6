import BluetoothCore

/// What resolving private addresses found, per address: the identity an address resolved to,
/// or that no stored IRK resolves it. Bounded: past ``limit`` the least recently used address
/// is forgotten (and resolved again if seen again), so a crowd rotating its addresses cannot
/// make it grow. A pure value; ``AddressResolver`` keeps it behind a lock.
struct ResolutionCache {
    /// One answer: the identity, or `nil` when no IRK resolves the address.
    typealias Answer = DeviceAddress?

    let limit: Int
    private var entries = RecencyTable<BluetoothAddress, Answer>()

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// How many addresses have an answer.
    var count: Int { entries.count }

    /// The answer for `address`, if one is cached: `.some(nil)` for a known miss. Makes the
    /// address the most recently used.
    mutating func answer(for address: BluetoothAddress) -> Answer? {
        entries.touch(address) { $0 }
    }

    /// Remembers the answer for `address`, forgetting the least recently used past the limit.
    mutating func store(_ answer: Answer, for address: BluetoothAddress) {
        entries.touch(address, value: answer)
        while entries.count > limit { _ = entries.removeLeastRecent() }
    }

    /// Forgets every answer (the bonds changed: a miss may now resolve, a hit may be gone).
    mutating func removeAll() {
        entries.removeAll()
    }
}
