import BluetoothCore
import BluetoothCrypto

/// LE Secure Connections out-of-band data (Core 6.0, Vol 3, Part H, 2.3.5.6.4): a random value
/// and a commitment to this device's public key, Cx = f4(PKx, PKx, r, 0), passed to the peer
/// over another channel (NFC, a QR code). With it, pairing authenticates without a passkey:
/// the peer checks that the public key it receives over the air is the one committed to.
public struct OutOfBandData: Sendable, Hashable, CustomStringConvertible {
    /// The device the data belongs to.
    public var address: DeviceAddress
    /// r.
    public var random: UInt128
    /// C.
    public var confirm: UInt128

    public init(address: DeviceAddress, random: UInt128, confirm: UInt128) {
        self.address = address
        self.random = random
        self.confirm = confirm
    }

    public var description: String { "OOB data of \(address)" }
}

/// This device's side of out-of-band pairing: the key pair the data commits to, and r.
struct LocalOutOfBand {
    let keyPair: SecureConnectionsKeyPair
    let random: UInt128

    /// The data to hand to the peer.
    func data(address: DeviceAddress) -> OutOfBandData {
        let x = keyPair.publicKeyX
        return OutOfBandData(address: address, random: random, confirm: SecurityToolbox.f4(u: x, v: x, x: random, z: 0))
    }
}
