import BluetoothCore

/// LE Long Term Key Request (Core 6.0, Vol 4, Part E, 7.7.65.5): the central started
/// encryption and the peripheral's controller asks the host for the key. Rand and EDIV are
/// zero for keys from LE Secure Connections.
public struct LELongTermKeyRequestEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x05
    public static let name = "LE Long Term Key Request"

    public var connectionHandle: UInt16 = 0
    /// Rand, the 64-bit value distributed with the key in legacy pairing.
    public var randomNumber: UInt64 = 0
    /// EDIV, the encrypted diversifier distributed with the key in legacy pairing.
    public var encryptedDiversifier: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16, randomNumber: UInt64 = 0, encryptedDiversifier: UInt16 = 0) {
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint64(&randomNumber)
        try coder.uint16(&encryptedDiversifier)
        try coder.end()
    }

    public var description: String {
        "LE Long Term Key Request handle=\(Hex.format(connectionHandle, digits: 4)) rand=\(Hex.format(randomNumber)) ediv=\(Hex.format(encryptedDiversifier))"
    }
}
