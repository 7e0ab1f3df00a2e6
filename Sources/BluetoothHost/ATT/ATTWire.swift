import BluetoothCore

/// Field codecs shared by several ATT PDUs.
enum ATTWire {
    /// Reads a UUID that fills the rest of the PDU: 2 or 16 octets (Core 6.0, Vol 3, Part F,
    /// 3.2.1); any other length is an invalid PDU.
    static func readTrailingUUID(_ reader: inout ByteReader, field: String) throws(PacketDecodingError) -> BluetoothUUID {
        let bytes = reader.readRemaining()
        guard bytes.count == 2 || bytes.count == 16, let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(context: reader.context, field: "\(field) length", value: UInt64(bytes.count))
        }
        return uuid
    }

    /// Reads a UUID of exactly `count` (2 or 16) octets.
    static func readUUID(_ reader: inout ByteReader, count: Int) throws(PacketDecodingError) -> BluetoothUUID {
        let bytes = try reader.readBytes(count)
        guard let uuid = BluetoothUUID(littleEndianBytes: bytes) else {
            throw .invalidValue(context: reader.context, field: "UUID length", value: UInt64(count))
        }
        return uuid
    }

    /// Reads a Set Of Handles filling the rest of the PDU, with at least `minimumCount` handles.
    static func readHandles(_ reader: inout ByteReader, minimumCount: Int) throws(PacketDecodingError) -> [UInt16] {
        guard reader.remainingCount >= 2 * minimumCount else {
            throw .truncated(context: reader.context, needed: 2 * minimumCount, available: reader.remainingCount)
        }
        guard reader.remainingCount % 2 == 0 else {
            throw .invalidValue(context: reader.context, field: "Set Of Handles length", value: UInt64(reader.remainingCount))
        }
        var handles: [UInt16] = []
        while !reader.isAtEnd { handles.append(try reader.readUInt16()) }
        return handles
    }

    /// Checks that a list of fixed-size entries fills the rest of the PDU exactly and is not empty.
    static func checkList(_ reader: ByteReader, entrySize: Int, field: String) throws(PacketDecodingError) {
        guard !reader.isAtEnd else {
            throw .truncated(context: reader.context, needed: entrySize, available: 0)
        }
        guard entrySize > 0, reader.remainingCount % entrySize == 0 else {
            throw .invalidValue(context: "\(reader.context) (entries of \(entrySize) octets)", field: "\(field) length",
                                value: UInt64(reader.remainingCount))
        }
    }

    static func hex(_ handle: UInt16) -> String { Hex.format(handle, digits: 4) }

    static func bytes(_ value: [UInt8]) -> String { "[\(Hex.encode(value, separator: " "))]" }
}
