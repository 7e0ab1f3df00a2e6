import BluetoothCore

/// Where a host keeps the static random address it generates as its identity on a controller
/// that has no public address (Read BD_ADDR answers 00:00:00:00:00:00) and cannot tell its own.
/// One address per adapter, named by the transport the host opened (`HCITransport/name`,
/// e.g. `hci0` or `serial:/dev/ttyACM0`): bonds are kept under the identity, so it must be the
/// same after a restart for them to count.
public protocol StaticAddressStore: Sendable {
    /// Whether the addresses outlive this process (a file), so that bonds count after a restart.
    var keepsAddressesAcrossRuns: Bool { get }
    /// The address kept for this adapter, if any. Throws ``BondStoreError/readFailed(_:)``
    /// when the store holds addresses it cannot read now (out of file descriptors, an I/O
    /// error): they are kept, and the caller must not replace them.
    func address(forAdapter adapter: String) async throws -> BluetoothAddress?
    /// Keeps the address of this adapter, replacing any.
    func save(_ address: BluetoothAddress, forAdapter adapter: String) async throws
}

/// Static addresses kept for this process's lifetime only: a host that generates one uses it
/// until it ends, and the next run generates another (bonds made meanwhile are not recognised).
public actor InMemoryStaticAddressStore: StaticAddressStore {
    private var addresses: [String: BluetoothAddress] = [:]

    public init() {}

    public nonisolated var keepsAddressesAcrossRuns: Bool { false }

    public func address(forAdapter adapter: String) -> BluetoothAddress? { addresses[adapter] }

    public func save(_ address: BluetoothAddress, forAdapter adapter: String) {
        addresses[adapter] = address
    }
}
