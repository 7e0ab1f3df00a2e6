import BluetoothCore
import BluetoothHost

/// GATT caching (Core 6.0, Vol 3, Part G, 2.5.2): the databases of bonded peripherals, and
/// of peripherals marked trusted, are kept with their Database Hash; reconnecting to one whose
/// hash has not changed discovers nothing. A bonded peripheral's database is used and kept
/// only over a link encrypted with its bond's key (Bluejay encrypts it as the link comes up),
/// under the bond's identity. See `LEHost/prepareDatabase(of:)`.
extension Bluejay {
    /// Lets the database of a peripheral that never bonds be cached, as a bonded one's is.
    /// Needs a started Bluejay.
    ///
    /// Trust is in the address alone: any device that uses it has its database cached in the
    /// peripheral's place. Trust only a peripheral whose address no other device can take
    /// where the app runs; a bonded peripheral needs no trust (see
    /// `LEHost/setDatabaseTrusted(_:for:)`).
    public func setDatabaseTrusted(_ trusted: Bool, for peripheral: PeripheralIdentifier) throws(BluejayError) {
        try requireBackend().setDatabaseTrusted(trusted, for: peripheral.address)
    }

    /// Forgets the cached database of a peripheral: the next connection discovers again.
    /// (Removing its bond does this too.)
    public func removeCachedDatabase(of peripheral: PeripheralIdentifier) async throws(BluejayError) {
        await (try requireBackend()).removeCachedDatabase(for: peripheral.address)
    }
}

extension BluejayCentral {
    /// As ``Bluejay/setDatabaseTrusted(_:for:)``.
    public func setDatabaseTrusted(_ trusted: Bool, for peripheral: PeripheralIdentifier) {
        backend.setDatabaseTrusted(trusted, for: peripheral.address)
    }

    /// As ``Bluejay/removeCachedDatabase(of:)``.
    public func removeCachedDatabase(of peripheral: PeripheralIdentifier) async {
        await backend.removeCachedDatabase(for: peripheral.address)
    }
}

extension CentralConnection {
    /// Readies the peer's cached database before anything is discovered on a new link
    /// (`LEHost/prepareDatabase(of:)`): nothing for a peer neither bonded nor trusted; for a
    /// bonded one, the link is encrypted with the bond's key first, and a peer that cannot
    /// encrypt with it gets no cached database (``GATTDatabasePreparation/unverified``); a
    /// failure is returned, and discovery then runs as it would without a cache.
    func prepareCachedDatabase(timeLimit: Duration?, clock: BluetoothClock) async -> Result<GATTDatabasePreparation, any Error> {
        do {
            return .success(try await withTimeLimit(timeLimit, clock: clock, operation: "checking the cached database") {
                try await prepareDatabase()
            })
        } catch {
            return .failure(error)
        }
    }
}
