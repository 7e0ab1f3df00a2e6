import BluetoothCore

/// LE legacy out-of-band data (Core 6.0, Vol 3, Part H, 2.3.5.4): a 128-bit Temporary Key (TK)
/// that both devices get over another channel (NFC, a QR code) and use in place of a passkey.
/// Pairing with it is authenticated as far as the channel is safe from a device in the middle;
/// a wrong TK fails with Confirm Value Failed. Used only by LE legacy pairing, when both
/// devices set the OOB flag: a peer that pairs with LE Secure Connections uses
/// ``OutOfBandData`` instead.
public struct LegacyOutOfBandData: Sendable, Hashable, CustomStringConvertible {
    /// The device that made the TK and hands it over.
    public var address: DeviceAddress
    /// The TK: 128 random bits (the specification's value, most significant bit first; the
    /// Security Manager TK Value AD type carries it least significant octet first).
    public var temporaryKey: UInt128

    public init(address: DeviceAddress, temporaryKey: UInt128) {
        self.address = address
        self.temporaryKey = temporaryKey
    }

    /// The data is a key: it is not printed.
    public var description: String { "legacy OOB data of \(address)" }
}
