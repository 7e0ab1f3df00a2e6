/// One direction of a packet's field declaration (``PacketFields``): ``ByteReader`` reads each
/// field from the bytes into the value, ``ByteWriter`` writes each field of the value out.
///
/// A packet lists its fields once, in wire order, as calls on a coder; encoding and decoding
/// both follow from that list, as Bumble's `fields` do:
///
/// ```swift
/// public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
///     try coder.uint16(&handle)
///     try coder.rest(&value)
/// }
/// ```
///
/// Every field method takes its property `inout`: a writer reads it, a reader sets it. A writer
/// never throws; a reader throws ``PacketDecodingError`` at the first field that is short or
/// holds a value the specification does not allow, in wire order. Checks that only decoding
/// makes go through ``check(_:field:value:)``, which a writer skips, so encoding writes what
/// the value holds, as it always did.
public protocol FieldCoder {
    /// Names the packet, for error messages (empty for a writer).
    var context: String { get }
    /// Whether the coder sets the fields from bytes (a reader) rather than writing them out.
    var isReading: Bool { get }
    /// The bytes left to read; 0 for a writer.
    var remainingCount: Int { get }

    mutating func uint8(_ value: inout UInt8) throws(PacketDecodingError)
    mutating func uint16(_ value: inout UInt16) throws(PacketDecodingError)
    /// An unsigned little-endian integer of 1...8 octets.
    mutating func littleEndian(_ value: inout UInt64, byteCount: Int) throws(PacketDecodingError)
    /// Exactly `count` octets; a writer cuts `value` or pads it with zeros to that size.
    mutating func bytes(_ value: inout [UInt8], count: Int) throws(PacketDecodingError)
    /// Everything left in the packet; a writer writes all of `value`.
    mutating func rest(_ value: inout [UInt8]) throws(PacketDecodingError)
}

extension ByteReader: FieldCoder {
    public var isReading: Bool { true }

    public mutating func uint8(_ value: inout UInt8) throws(PacketDecodingError) { value = try readUInt8() }

    public mutating func uint16(_ value: inout UInt16) throws(PacketDecodingError) { value = try readUInt16() }

    public mutating func littleEndian(_ value: inout UInt64, byteCount: Int) throws(PacketDecodingError) {
        value = try readLittleEndian(byteCount: byteCount)
    }

    public mutating func bytes(_ value: inout [UInt8], count: Int) throws(PacketDecodingError) { value = try readBytes(count) }

    public mutating func rest(_ value: inout [UInt8]) { value = readRemaining() }
}

extension ByteWriter: FieldCoder {
    public var context: String { "" }
    public var isReading: Bool { false }
    public var remainingCount: Int { 0 }

    public mutating func uint8(_ value: inout UInt8) { write(value) }

    public mutating func uint16(_ value: inout UInt16) { write(value) }

    public mutating func littleEndian(_ value: inout UInt64, byteCount: Int) { writeLittleEndian(value, byteCount: byteCount) }

    public mutating func bytes(_ value: inout [UInt8], count: Int) { write(value, paddedTo: count) }

    public mutating func rest(_ value: inout [UInt8]) { write(contentsOf: value) }
}
