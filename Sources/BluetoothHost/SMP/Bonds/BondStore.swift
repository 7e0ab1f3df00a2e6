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
}
