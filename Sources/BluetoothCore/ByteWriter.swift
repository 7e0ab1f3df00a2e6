/// Appends little-endian fields to a byte buffer; the encoding twin of ``ByteReader``.
public struct ByteWriter: Sendable {
    public private(set) var bytes: [UInt8]

    public init(capacity: Int = 32) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func write(_ value: UInt8) { bytes.append(value) }
    public mutating func write(_ value: Int8) { bytes.append(UInt8(bitPattern: value)) }
    public mutating func write(_ value: UInt16) { writeLittleEndian(UInt64(value), byteCount: 2) }
    public mutating func write(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 4) }
    public mutating func write(_ value: UInt64) { writeLittleEndian(value, byteCount: 8) }
    public mutating func writeUInt24(_ value: UInt32) { writeLittleEndian(UInt64(value), byteCount: 3) }
    public mutating func write(_ value: Bool) { bytes.append(value ? 1 : 0) }

    public mutating func write(contentsOf other: some Sequence<UInt8>) {
        bytes.append(contentsOf: other)
    }

    /// Writes exactly `count` octets: `bytes` cut or zero-padded to that size.
    public mutating func write(_ bytes: [UInt8], paddedTo count: Int) {
        write(contentsOf: bytes.prefix(count))
        if bytes.count < count { write(contentsOf: repeatElement(0, count: count - bytes.count)) }
    }

    public mutating func writeLittleEndian(_ value: UInt64, byteCount: Int) {
        for index in 0..<byteCount {
            bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
        }
    }
}

// MARK: Integers of any width

extension ByteWriter {
    /// Writes a fixed-width integer of any width and signedness: `Integer.bitWidth / 8`
    /// octets, least significant first.
    @inlinable
    public mutating func writeInteger<Integer: FixedWidthInteger>(_ value: Integer) {
        for index in 0..<(Integer.bitWidth / 8) {
            write(UInt8(truncatingIfNeeded: value >> (8 * index)))
        }
    }

    /// The octets of `value`, least significant first: the one little-endian encoder of the
    /// package, for callers that need the octets alone.
    @inlinable
    public static func littleEndianBytes<Integer: FixedWidthInteger>(of value: Integer) -> [UInt8] {
        var writer = ByteWriter(capacity: Integer.bitWidth / 8)
        writer.writeInteger(value)
        return writer.bytes
    }
}
