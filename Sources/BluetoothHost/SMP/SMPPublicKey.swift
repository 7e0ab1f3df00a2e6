import BluetoothCore

/// The P-256 public key of a Pairing Public Key command (Core 6.0, Vol 3, Part H, 3.5.6):
/// the X and Y coordinates, 32 octets each, least significant octet first as on the wire.
/// (Most crypto libraries want big-endian coordinates: reverse each.)
public struct SMPPublicKey: Hashable, Sendable, CustomStringConvertible {
    public static let coordinateLength = 32

    public let x: [UInt8]
    public let y: [UInt8]

    /// `nil` unless both coordinates are 32 octets.
    public init?(x: [UInt8], y: [UInt8]) {
        guard x.count == Self.coordinateLength, y.count == Self.coordinateLength else { return nil }
        self.x = x
        self.y = y
    }

    /// From coordinates most significant octet first, as crypto libraries give them; each must
    /// be 32 octets (a key pair's own coordinates always are).
    init(mostSignificantFirstX x: [UInt8], y: [UInt8]) {
        self.x = Array(x.reversed())
        self.y = Array(y.reversed())
    }

    public var description: String {
        "X=\(Hex.encode(x.reversed())) Y=\(Hex.encode(y.reversed()))"
    }
}
