import BluetoothCore
import BluetoothCrypto

/// Out-of-band pairing data (Core 6.0, Vol 3, Part H, 2.3.5.6.4): make this device's, to
/// hand over by NFC or a QR code, and take the peer's. With either side holding the other's
/// data, an LE Secure Connections pairing uses the OOB method: authenticated, no passkey.
extension LEHost {
    /// Makes this device's OOB data (a fresh P-256 key pair and random value; pairings use that
    /// key pair from now on) and returns what to give the peer.
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

    /// Forgets this device's OOB data and the peers'.
    public func clearOutOfBandData() {
        localOutOfBand = nil
        peerOutOfBand = [:]
    }
}
