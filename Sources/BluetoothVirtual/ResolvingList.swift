import BluetoothCore
import BluetoothCrypto
import BluetoothHCI

/// A controller's resolving list (Core 6.0, Vol 4, Part E, 7.8.38-7.8.45, 7.8.77; Vol 6,
/// Part B, 4.7 and 6.9): identity addresses with their IRKs and privacy modes. With address
/// resolution on, the simulation resolves peers' private addresses with it: in advertising
/// reports and connections (address types 0x02 and 0x03, the private address beside the
/// identity), and where LE Create Connection names an identity. It generates no private
/// address for its own device (RPA own-address types fall back to the identity address).
struct ResolvingList: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var peerIdentity: DeviceAddress
        /// 16 octets, least significant first; all zeros: the peer uses its identity address.
        var peerIRK: [UInt8]
        var localIRK: [UInt8]
        /// Network privacy mode after the entry is added (7.8.77).
        var privacyMode: PrivacyMode = .network

        /// The peer's IRK as a number; `nil` when all zeros.
        var irk: UInt128? {
            let value = peerIRK.reversed().reduce(UInt128(0)) { $0 << 8 | UInt128($1) }
            return value == 0 ? nil : value
        }
    }

    /// How many entries a virtual controller holds (LE Read Resolving List Size).
    static let capacity = 8

    private(set) var entries: [Entry] = []
    /// LE Set Address Resolution Enable; off after reset (7.8.44).
    var isResolutionEnabled = false
    /// LE Set Resolvable Private Address Timeout, in seconds; 900 after reset (7.8.45).
    var addressTimeout: UInt16 = 900

    /// Adds an entry: a second one for the same identity is invalid, a full list refuses
    /// (Core 6.0, Vol 4, Part E, 7.8.38).
    mutating func add(_ entry: Entry, capacity: Int = ResolvingList.capacity) -> HCIStatus {
        guard !entries.contains(where: { $0.peerIdentity == entry.peerIdentity }) else { return .invalidCommandParameters }
        guard entries.count < capacity else { return .memoryCapacityExceeded }
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

    /// Sets an entry's privacy mode; one not in the list is an Unknown Connection Identifier
    /// (7.8.77).
    mutating func setPrivacyMode(_ mode: PrivacyMode, of identity: DeviceAddress) -> HCIStatus {
        guard let index = entries.firstIndex(where: { $0.peerIdentity == identity }) else { return .unknownConnectionIdentifier }
        entries[index].privacyMode = mode
        return .success
    }

    /// How a packet from `address` is taken with resolution on: the identity of the entry whose
    /// IRK resolves it (with the private address), the identity itself when an entry names it
    /// and its mode accepts it, `.ignored` when its entry's network privacy mode does not
    /// (Vol 6, Part B, 4.7), else `.unresolved`.
    enum Resolution: Equatable {
        case resolved(identity: DeviceAddress, privateAddress: BluetoothAddress)
        case identity(DeviceAddress)
        case ignored
        case unresolved
    }

    func resolve(_ address: DeviceAddress) -> Resolution {
        guard isResolutionEnabled else { return .unresolved }
        if address.type == .random, ResolvablePrivateAddress.isResolvable(address.address.rawValue) {
            for entry in entries {
                if let irk = entry.irk, ResolvablePrivateAddress.resolves(address.address.rawValue, irk: irk) {
                    return .resolved(identity: entry.peerIdentity, privateAddress: address.address)
                }
            }
            return .unresolved
        }
        guard let entry = entries.first(where: { $0.peerIdentity == DeviceAddress(address.address, type: address.type.base) }) else {
            return .unresolved
        }
        return entry.irk != nil && entry.privacyMode == .network ? .ignored : .identity(entry.peerIdentity)
    }
}

extension ResolvingList.Resolution {
    /// The address to report: the identity with type 0x02 or 0x03 when resolved, else
    /// `address` as it came.
    func reported(_ address: DeviceAddress) -> DeviceAddress {
        guard case let .resolved(identity, _) = self else { return address }
        return DeviceAddress(identity.address, type: identity.type == .public ? .publicIdentity : .randomIdentity)
    }

    /// The private address a resolved peer used (LE Enhanced Connection Complete), else zero.
    var privateAddress: BluetoothAddress {
        if case let .resolved(_, address) = self { return address }
        return .zero
    }
}
