import BluetoothCore

/// Field readers shared by the HCI command and event decoders. Each one throws
/// ``PacketDecodingError`` instead of trapping on a value the specification does not allow.
extension ByteReader {
    /// A Connection_Handle: 12 bits; the upper four bits of the octet pair are not part of it
    /// (Core 6.0, Vol 4, Part E, 5.4.2).
    mutating func readConnectionHandle() throws(PacketDecodingError) -> UInt16 {
        try readUInt16() & 0x0FFF
    }

    mutating func readStatus() throws(PacketDecodingError) -> HCIStatus {
        HCIStatus(rawValue: try readUInt8())
    }

    mutating func readAddress() throws(PacketDecodingError) -> BluetoothAddress {
        try BluetoothAddress(reading: &self)
    }

    /// A one-octet boolean: 0x00 or 0x01, anything else is invalid.
    mutating func readBool(field: String) throws(PacketDecodingError) -> Bool {
        let value = try readUInt8()
        switch value {
        case 0: return false
        case 1: return true
        default: throw .invalidValue(context: context, field: field, value: UInt64(value))
        }
    }

    /// A one-octet enumeration; a value without a case is invalid.
    mutating func readEnum<T: RawRepresentable>(_ type: T.Type = T.self, field: String) throws(PacketDecodingError) -> T where T.RawValue == UInt8 {
        let value = try readUInt8()
        guard let result = T(rawValue: value) else {
            throw .invalidValue(context: context, field: field, value: UInt64(value))
        }
        return result
    }

    /// A two-octet enumeration; a value without a case is invalid.
    mutating func readEnum<T: RawRepresentable>(_ type: T.Type = T.self, field: String) throws(PacketDecodingError) -> T where T.RawValue == UInt16 {
        let value = try readUInt16()
        guard let result = T(rawValue: value) else {
            throw .invalidValue(context: context, field: field, value: UInt64(value))
        }
        return result
    }

    /// An LE address type limited to public (0x00) and random (0x01), as in the fields that do
    /// not allow identity address types.
    mutating func readPublicOrRandomAddressType(field: String) throws(PacketDecodingError) -> AddressType {
        let value = try readUInt8()
        switch value {
        case AddressType.public.rawValue: return .public
        case AddressType.random.rawValue: return .random
        default: throw .invalidValue(context: context, field: field, value: UInt64(value))
        }
    }

    /// An RSSI or TX power octet where 127 (0x7F) means "not available".
    mutating func readOptionalPower() throws(PacketDecodingError) -> Int8? {
        let value = try readInt8()
        return value == HCIPowerLevel.notAvailable ? nil : value
    }

    /// A length octet, at most `maximum`, then that many bytes.
    mutating func readLengthPrefixedBytes(maximum: Int, field: String) throws(PacketDecodingError) -> [UInt8] {
        let length = try readUInt8()
        guard Int(length) <= maximum else {
            throw .invalidValue(context: context, field: field, value: UInt64(length))
        }
        return try readBytes(Int(length))
    }

    /// A fixed-size block of octets kept in wire order (least significant first).
    mutating func readKey128() throws(PacketDecodingError) -> [UInt8] {
        try readBytes(16)
    }
}

extension ByteWriter {
    mutating func write(_ status: HCIStatus) { write(status.rawValue) }

    mutating func write(_ address: BluetoothAddress) { address.write(to: &self) }

    /// Writes a connection handle, keeping its 12 bits.
    mutating func writeConnectionHandle(_ handle: UInt16) { write(handle & 0x0FFF) }

    /// Writes an RSSI or TX power octet, 127 (0x7F) for `nil`.
    mutating func writeOptionalPower(_ value: Int8?) { write(value ?? HCIPowerLevel.notAvailable) }

    /// Writes exactly `count` octets: `bytes` cut or zero-padded to that size.
    mutating func writeFixed(_ bytes: [UInt8], count: Int) {
        write(contentsOf: bytes.prefix(count))
        if bytes.count < count { write(contentsOf: [UInt8](repeating: 0, count: count - bytes.count)) }
    }
}

/// The HCI fields of command and event declarations (``PacketFields``).
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

