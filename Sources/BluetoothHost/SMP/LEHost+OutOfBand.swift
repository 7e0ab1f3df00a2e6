import BluetoothCore
import BluetoothCrypto

/// Out-of-band pairing data: make this device's, to hand over by NFC or a QR code, and take the
/// peer's. LE Secure Connections (Core 6.0, Vol 3, Part H, 2.3.5.6.4): with either side holding
/// the other's r and C, the pairing uses the OOB method. LE legacy pairing (2.3.5.4): with both
/// sides holding the same TK, it does. Either way authenticated, no passkey.
extension LEHost {
    /// Makes this device's OOB data (a fresh P-256 key pair and random value; pairings use that
    /// key pair from now on) and returns what to give the peer. The first pairing whose peer
    /// proves it holds the data uses it up (make new data for another); one that fails, a peer
    /// without it, leaves it.
    public func makeOutOfBandData() -> OutOfBandData {
        let local = LocalOutOfBand(keyPair: SecureConnectionsKeyPair(), random: UInt128.random(in: 1...UInt128.max))
        localOutOfBand = local
        return local.data(address: localAddress)
    }

    /// The OOB data a peer gave out of band, used when pairing with it.
    public func setPeerOutOfBandData(_ data: OutOfBandData) {
        peerOutOfBand[data.address.address] = data
        if peerOutOfBand.count > 64, let any = peerOutOfBand.keys.first(where: { $0 != data.address.address }) {
            peerOutOfBand[any] = nil
        }
    }

    /// Makes a Temporary Key for LE legacy out-of-band pairing (Core 6.0, Vol 3, Part H,
    /// 2.3.5.4: 128 random bits) and returns it to give the peer out of band. A legacy pairing
    /// in which the peer also says it has OOB data uses it (unless the peer's own TK was set
    /// with ``setPeerLegacyOutOfBandData(_:)``); the first whose peer proves it holds the TK
    /// (its confirm value checks out) uses it up (make new data for another), while one that
    /// fails, a peer without this TK, leaves it.
    public func makeLegacyOutOfBandData() -> LegacyOutOfBandData {
        var generator = SystemRandomNumberGenerator()
        let data = LegacyOutOfBandData(address: localAddress, temporaryKey: UInt128.random(in: 1...UInt128.max, using: &generator))
        localLegacyOutOfBand = data
        return data
    }

    /// The TK a peer gave out of band for LE legacy pairing, used when pairing with it (the
    /// OOB flag then says this device has data for that peer).
    public func setPeerLegacyOutOfBandData(_ data: LegacyOutOfBandData) {
        peerLegacyOutOfBand[data.address.address] = data
        if peerLegacyOutOfBand.count > 64, let any = peerLegacyOutOfBand.keys.first(where: { $0 != data.address.address }) {
            peerLegacyOutOfBand[any] = nil
        }
    }

    /// Forgets this device's OOB data and the peers', LE Secure Connections and legacy.
    public func clearOutOfBandData() {
        localOutOfBand = nil
        peerOutOfBand = [:]
        localLegacyOutOfBand = nil
        peerLegacyOutOfBand = [:]
    }
}
