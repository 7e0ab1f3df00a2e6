import BluetoothCore

/// Where bonds are kept between connections (and, for ``FileBondStore``, between runs).
/// Bonds are found by the pair of identity addresses (this device's, the peer's); an
/// address type counts as its base type (public or random).
public protocol BondStore: Sendable {
    /// The bond between these identities, if there is one.
    func bond(local: DeviceAddress, peer: DeviceAddress) async -> Bond?
    /// Every bond kept.
    func bonds() async -> [Bond]
    /// Keeps a bond, replacing any between the same identities.
    func save(_ bond: Bond) async throws
    /// Forgets the bond between these identities; `false` if there was none.
    @discardableResult func removeBond(local: DeviceAddress, peer: DeviceAddress) async throws -> Bool
    /// As ``bond(local:peer:)``, but a bond that is kept and cannot be read now (the system
    /// is out of file descriptors, say) throws ``BondStoreError/readFailed(_:)`` rather than
    /// looking absent. The bond stays kept. By default, ``bond(local:peer:)``.
    func readBond(local: DeviceAddress, peer: DeviceAddress) async throws(BondStoreError) -> Bond?
    /// As ``bonds()``, but throws ``BondStoreError/readFailed(_:)`` when a bond kept cannot be
    /// read now. By default, ``bonds()``.
    func readBonds() async throws(BondStoreError) -> [Bond]
    /// A number that changes whenever the bonds may have changed (saved or removed through
    /// the store, or, for ``FileBondStore``, by another process), so that a host can keep what
    /// it derives from them (the IRKs it resolves addresses with) up to date; `nil` when the
    /// store cannot tell, and then a host reads the bonds on each lookup. By default `nil`.
    func revision() async -> UInt64?
}

extension BondStore {
    public func readBond(local: DeviceAddress, peer: DeviceAddress) async throws(BondStoreError) -> Bond? {
        await bond(local: local, peer: peer)
    }

    public func readBonds() async throws(BondStoreError) -> [Bond] {
        await bonds()
    }

    public func revision() async -> UInt64? { nil }
}
