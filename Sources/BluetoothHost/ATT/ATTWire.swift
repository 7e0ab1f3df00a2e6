import BluetoothCore

/// Fields shared by several ATT PDUs' declarations (``PacketFields``).
extension FieldCoder {
    /// A UUID that fills the rest of the PDU: 2 or 16 octets (Core 6.0, Vol 3, Part F, 3.2.1);
    /// a reader refuses any other length, a writer writes 2 octets when the UUID has a 16-bit
    /// alias.
    mutating func trailingUUID(_ uuid: inout BluetoothUUID, field: String) throws(PacketDecodingError) {
        var bytes = isReading ? [] : uuid.attBytes
        try rest(&bytes)
        guard isReading else { return }
        guard bytes.count == 2 || bytes.count == 16, let decoded = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(context: context, field: "\(field) length", value: UInt64(bytes.count))
        }
        uuid = decoded
    }

    /// A UUID of exactly `count` (2 or 16) octets.
    mutating func uuid(_ uuid: inout BluetoothUUID, count: Int) throws(PacketDecodingError) {
        var bytes = isReading ? [] : count == 2 ? uuid.attBytes : uuid.littleEndianBytes128
        try self.bytes(&bytes, count: count)
        guard isReading else { return }
        guard let decoded = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(context: context, field: "UUID length", value: UInt64(count))
        }
        uuid = decoded
    }

    /// A Set Of Handles filling the rest of the PDU; a reader requires at least `minimumCount`.
    mutating func handles(_ handles: inout [UInt16], minimumCount: Int) throws(PacketDecodingError) {
        try requireRemaining(2 * minimumCount)
        try check(remainingCount % 2 == 0, field: "Set Of Handles length", value: remainingCount)
        try list(&handles, blank: 0) { coder, handle throws(PacketDecodingError) in try coder.uint16(&handle) }
    }

    /// A reader checks that a list of fixed-size entries fills the rest of the PDU exactly and
    /// is not empty.
    func checkList(entrySize: Int, field: String) throws(PacketDecodingError) {
        guard isReading else { return }
        guard remainingCount > 0 else {
            throw .truncated(context: context, needed: entrySize, available: 0)
        }
        guard entrySize > 0, remainingCount % entrySize == 0 else {
            throw .invalidValue(context: "\(context) (entries of \(entrySize) octets)", field: "\(field) length",
                                value: UInt64(remainingCount))
        }
    }
}

/// How ATT PDUs describe their fields.
enum ATTWire {
    static func hex(_ handle: UInt16) -> String { Hex.format(handle, digits: 4) }

    static func bytes(_ value: [UInt8]) -> String { "[\(Hex.encode(value, separator: " "))]" }
}
