/// Reads little-endian fields from a byte buffer, throwing ``PacketDecodingError`` when the
/// buffer is too short. Bluetooth puts multi-octet fields in little-endian order
/// (Core 6.0, Vol 1, Part E, 2.2) unless a field says otherwise.
public struct ByteReader: Sendable {
    /// The bytes not yet read.
    public private(set) var remaining: ArraySlice<UInt8>
    /// Names the packet being decoded, for error messages.
    public let context: String

    public init(_ bytes: some Collection<UInt8>, context: String) {
        self.remaining = ArraySlice(bytes)
        self.context = context
    }

    /// Reads an array without copying it.
    public init(_ bytes: [UInt8], context: String) {
        self.remaining = bytes[...]
        self.context = context
    }

    /// Reads a slice without copying it.
    public init(_ bytes: ArraySlice<UInt8>, context: String) {
        self.remaining = bytes
        self.context = context
    }

    public var isAtEnd: Bool { remaining.isEmpty }
    public var remainingCount: Int { remaining.count }

    @usableFromInline
    mutating func take(_ count: Int) throws(PacketDecodingError) -> ArraySlice<UInt8> {
        guard count >= 0, remaining.count >= count else {
            throw .truncated(context: context, needed: count, available: remaining.count)
        }
        let slice = remaining.prefix(count)
        remaining = remaining.dropFirst(count)
        return slice
    }

    public mutating func readUInt8() throws(PacketDecodingError) -> UInt8 {
        try take(1).first ?? 0
    }

    public mutating func readInt8() throws(PacketDecodingError) -> Int8 {
        Int8(bitPattern: try readUInt8())
    }

    public mutating func readUInt16() throws(PacketDecodingError) -> UInt16 {
        guard let value = Self.uint16(in: remaining, at: 0) else {
            throw .truncated(context: context, needed: 2, available: remaining.count)
        }
        remaining = remaining.dropFirst(2)
        return value
    }

    public mutating func readUInt24() throws(PacketDecodingError) -> UInt32 {
        UInt32(try readLittleEndian(byteCount: 3))
    }

    public mutating func readUInt32() throws(PacketDecodingError) -> UInt32 {
        UInt32(try readLittleEndian(byteCount: 4))
    }

    public mutating func readUInt64() throws(PacketDecodingError) -> UInt64 {
        try readLittleEndian(byteCount: 8)
    }

    /// Reads an unsigned little-endian integer of 1...8 bytes.
    public mutating func readLittleEndian(byteCount: Int) throws(PacketDecodingError) -> UInt64 {
        precondition((1...8).contains(byteCount), "integer width is a programming constant")
        var value: UInt64 = 0
        for (shift, byte) in try take(byteCount).enumerated() {
            value |= UInt64(byte) << (8 * UInt64(shift))
        }
        return value
    }

    public mutating func readBytes(_ count: Int) throws(PacketDecodingError) -> [UInt8] {
        Array(try take(count))
    }

    /// Reads everything that is left.
    public mutating func readRemaining() -> [UInt8] {
        let bytes = Array(remaining)
        remaining = []
        return bytes
    }

    public mutating func skip(_ count: Int) throws(PacketDecodingError) {
        _ = try take(count)
    }

    /// Throws ``PacketDecodingError/trailingBytes(context:count:)`` unless every byte was read.
    public func expectEnd() throws(PacketDecodingError) {
        guard remaining.isEmpty else {
            throw .trailingBytes(context: context, count: remaining.count)
        }
    }
}

// MARK: Fixed-offset reads

extension ByteReader {
    /// The little-endian `UInt16` that starts `offset` bytes after `bytes.startIndex`, or
    /// `nil` when `bytes` does not hold both of its bytes. The non-throwing, in-place form of
    /// ``readUInt16()`` (which reads through it), for the receive path's fixed-offset header
    /// fields: it neither copies the bytes nor makes a reader.
    @inlinable
    public static func uint16(in bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16? {
        guard offset >= 0, offset < bytes.count - 1 else { return nil }
        let index = bytes.startIndex + offset
        return UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8
    }
}

// MARK: Integers of any width

extension ByteReader {
    /// Reads a fixed-width integer of any width and signedness (`Int16`, `UInt128`, …):
    /// `Integer.bitWidth / 8` octets, least significant first.
    @inlinable
    public mutating func readInteger<Integer: FixedWidthInteger>(_: Integer.Type = Integer.self) throws(PacketDecodingError) -> Integer {
        Self.integer(littleEndian: try take(Integer.bitWidth / 8))
    }

    /// The integer whose octets, least significant first, are `bytes`: the one little-endian
    /// decoder of the package, for callers that checked the length themselves. Octets past
    /// the integer's width are ignored; fewer leave its high octets zero.
    @inlinable
    public static func integer<Integer: FixedWidthInteger>(littleEndian bytes: some Collection<UInt8>,
                                                           as _: Integer.Type = Integer.self) -> Integer {
        var value = Integer.zero
        for (index, byte) in bytes.prefix(Integer.bitWidth / 8).enumerated() {
            value |= Integer(truncatingIfNeeded: byte) << (8 * index)
        }
        return value
    }
}
