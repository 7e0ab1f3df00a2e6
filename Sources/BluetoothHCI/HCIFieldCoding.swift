import BluetoothCore

/// The HCI fields of command and event declarations (`PacketFields`).
extension FieldCoder {
    /// A Connection_Handle: 12 bits; the upper four bits of the octet pair are not part of it
    /// (Core 6.0, Vol 4, Part E, 5.4.2).
    @inlinable
    public mutating func connectionHandle(_ handle: inout UInt16) throws(PacketDecodingError) {
        var raw = handle & 0x0FFF
        try uint16(&raw)
        handle = raw & 0x0FFF
    }

    /// A Status or Reason octet; every value is kept, known or not.
    @inlinable
    public mutating func status(_ status: inout HCIStatus) throws(PacketDecodingError) {
        var raw = status.rawValue
        try uint8(&raw)
        status = HCIStatus(rawValue: raw)
    }

    /// An LE address type limited to public (0x00) and random (0x01), as in the fields that do
    /// not allow identity address types: a writer writes an identity type as its base type.
    @inlinable
    public mutating func publicOrRandomAddressType(_ type: inout AddressType, field: String) throws(PacketDecodingError) {
        var raw = type.base.rawValue
        try uint8(&raw)
        switch raw {
        case AddressType.public.rawValue: type = .public
        case AddressType.random.rawValue: type = .random
        default: throw .invalidValue(context: context, field: field, value: UInt64(raw))
        }
    }

    /// An RSSI or TX power octet where 127 (0x7F) means "not available" (`nil`).
    @inlinable
    public mutating func optionalPower(_ power: inout Int8?) throws(PacketDecodingError) {
        var raw = power ?? HCIPowerLevel.notAvailable
        try int8(&raw)
        power = raw == HCIPowerLevel.notAvailable ? nil : raw
    }

    /// A length octet, at most `maximum` when read, then that many octets.
    @inlinable
    public mutating func lengthPrefixedBytes(_ bytes: inout [UInt8], maximum: Int, field: String) throws(PacketDecodingError) {
        var length = UInt8(truncatingIfNeeded: bytes.count)
        try uint8(&length)
        try check(Int(length) <= maximum, field: field, value: length)
        if isReading {
            try self.bytes(&bytes, count: Int(length))
        } else {
            try rest(&bytes)
        }
    }
}

/// Shared constants of RSSI and TX power fields.
@usableFromInline
enum HCIPowerLevel {
    /// 127 dBm is the "not available" value of RSSI and TX power fields
    /// (Core 6.0, Vol 4, Part E, 7.7.65.2 and 7.7.65.13).
    @usableFromInline
    static let notAvailable: Int8 = 127
}
