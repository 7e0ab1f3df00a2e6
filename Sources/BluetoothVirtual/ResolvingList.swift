import BluetoothCore
import BluetoothHCI

/// A controller's resolving list (Core 6.0, Vol 4, Part E, 7.8.38-7.8.41; Vol 6, Part B,
/// 4.7): identity addresses and their IRKs. Kept and reported; the simulation does not
/// resolve or generate resolvable private addresses with it yet.
struct ResolvingList: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var peerIdentity: DeviceAddress
        /// 16 octets, least significant first.
        var peerIRK: [UInt8]
        var localIRK: [UInt8]
    }

    /// How many entries a virtual controller holds (LE Read Resolving List Size).
    static let capacity = 8

    private(set) var entries: [Entry] = []
    /// LE Set Address Resolution Enable; off after reset (7.8.44).
    var isResolutionEnabled = false

    /// Adds an entry: a second one for the same identity is invalid, a full list refuses
    /// (Core 6.0, Vol 4, Part E, 7.8.38).
    mutating func add(_ entry: Entry) -> HCIStatus {
        guard !entries.contains(where: { $0.peerIdentity == entry.peerIdentity }) else { return .invalidCommandParameters }
        guard entries.count < Self.capacity else { return .memoryCapacityExceeded }
        entries.append(entry)
        return .success
    }

    /// Removes an identity's entry; one not in the list is an Unknown Connection Identifier
    /// (Core 6.0, Vol 4, Part E, 7.8.39).
    mutating func remove(_ identity: DeviceAddress) -> HCIStatus {
        guard let index = entries.firstIndex(where: { $0.peerIdentity == identity }) else { return .unknownConnectionIdentifier }
        entries.remove(at: index)
        return .success
    }

    mutating func clear() { entries.removeAll() }
}
