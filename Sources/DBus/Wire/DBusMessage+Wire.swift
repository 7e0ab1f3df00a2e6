/// A message in the wire format: its bytes and the Unix file descriptors that go with them.
public struct DBusEncodedMessage: Sendable {
    /// The message, header and body.
    public var bytes: [UInt8]
    /// The descriptors the body's `h` values index, in index order.
    public var fileDescriptors: [DBusFileDescriptor]
}

extension DBusMessage {
    /// The longest message (D-Bus Specification, "Message Format": 2^27 bytes).
    public static let maximumLength = 1 << 27
    /// The most Unix file descriptors one message may carry: what Linux passes in one
    /// `sendmsg` (SCM_MAX_FD). Buses allow fewer (dbus-daemon's system bus: 16).
    public static let maximumFileDescriptors = 253
    /// The length of the fixed part of the header, up to and including the header fields'
    /// array length: enough to know the whole message's length.
    static let fixedHeaderLength = 16

    /// The message in the wire format. The ``serial`` must be set (the connection does it).
    /// Throws ``DBusWireError`` when the message breaks a rule: a missing required header
    /// field, an invalid name, a value that does not fit its declared type, a limit.
    public func encode(byteOrder: DBusByteOrder = .little) throws(DBusWireError) -> DBusEncodedMessage {
        guard serial != 0 else { throw .invalidHeader("the serial is 0") }
        let signature = try self.signature
        var bodyWriter = DBusWireWriter(byteOrder: byteOrder)
        for (value, type) in zip(body, signature.types) { try bodyWriter.value(value, as: type) }
        let descriptors = bodyWriter.fileDescriptors
        guard descriptors.count <= Self.maximumFileDescriptors else {
            throw .tooManyFileDescriptors(descriptors.count, limit: Self.maximumFileDescriptors)
        }
        guard bodyWriter.bytes.count <= Self.maximumLength else { throw .messageTooLong(bodyWriter.bytes.count, limit: Self.maximumLength) }

        var fields = DBusHeaderFields(message: self)
        fields.signature = body.isEmpty ? nil : signature
        fields.unixFDs = descriptors.isEmpty ? nil : UInt32(descriptors.count)
        var header = DBusMessageHeader(
            marker: byteOrder.marker, kind: kind.rawValue, flags: flags.rawValue, bodyLength: UInt32(bodyWriter.bytes.count),
            serial: serial, fields: try fields.encoded(for: kind)
        )
        var writer = DBusWireWriter(byteOrder: byteOrder, capacity: 128 + bodyWriter.bytes.count)
        try header.code(&writer)
        writer.pad(to: 8)
        writer.append(bodyWriter.bytes)
        guard writer.bytes.count <= Self.maximumLength else { throw .messageTooLong(writer.bytes.count, limit: Self.maximumLength) }
        return DBusEncodedMessage(bytes: writer.bytes, fileDescriptors: descriptors)
    }

    /// Decodes one whole message, `bytes` exactly, with the descriptors that came with it.
    public static func decode(_ bytes: [UInt8], fileDescriptors: [DBusFileDescriptor] = []) throws(DBusWireError) -> DBusMessage {
        try decode(bytes[...], availableFileDescriptors: fileDescriptors[...]).message
    }

    /// Decodes the message that is exactly `bytes`; its `h` values index the first of
    /// `availableFileDescriptors`. Returns how many of them it claims (its UNIX_FDS field).
    static func decode(
        _ bytes: ArraySlice<UInt8>, availableFileDescriptors: ArraySlice<DBusFileDescriptor>, maximumLength: Int = maximumLength
    ) throws(DBusWireError) -> (message: DBusMessage, fileDescriptorCount: Int) {
        guard bytes.count <= maximumLength else { throw .messageTooLong(bytes.count, limit: maximumLength) }
        guard let marker = bytes.first else { throw .truncated(offset: 0, needed: fixedHeaderLength) }
        guard let byteOrder = DBusByteOrder(marker: marker) else {
            throw .invalidHeader("the first byte is \(marker), not \"l\" (little-endian) or \"B\" (big-endian)")
        }
        var reader = DBusWireReader(bytes: bytes, byteOrder: byteOrder)
        var header = DBusMessageHeader()
        try header.code(&reader)
        guard header.version == DBusMessageHeader.protocolVersion else { throw .invalidHeader("protocol version \(header.version), not 1") }
        guard header.serial != 0 else { throw .invalidHeader("the serial is 0") }
        let kind = Kind(rawValue: header.kind)
        let fields = try DBusHeaderFields(decoding: header.fields, for: kind)
        try reader.align(8)
        guard reader.remaining == Int(header.bodyLength) else {
            throw .invalidHeader("the body is \(reader.remaining) bytes long, the header says \(header.bodyLength)")
        }
        let descriptorCount = Int(fields.unixFDs ?? 0)
        guard descriptorCount <= availableFileDescriptors.count else {
            throw .missingFileDescriptors(declared: descriptorCount, received: availableFileDescriptors.count)
        }
        reader.fileDescriptors = availableFileDescriptors.prefix(descriptorCount)
        var body: [DBusValue] = []
        let signature = fields.signature ?? .empty
        body.reserveCapacity(signature.types.count)
        for type in signature.types { body.append(try reader.value(of: type)) }
        guard reader.remaining == 0 else {
            throw .bodyLengthMismatch(declared: Int(header.bodyLength), used: Int(header.bodyLength) - reader.remaining)
        }
        let message = DBusMessage(
            kind: kind, flags: Flags(rawValue: header.flags), serial: header.serial, path: fields.path, interface: fields.interface,
            member: fields.member, errorName: fields.errorName.map(DBusErrorName.init(rawValue:)), replySerial: fields.replySerial,
            destination: fields.destination, sender: fields.sender, body: body
        )
        return (message, descriptorCount)
    }

    /// The length of the message that `bytes` starts with, once its first 16 bytes are there
    /// (`nil` before). Throws when those bytes cannot start a message or announce one longer
    /// than `limit`, before anything more is read or buffered.
    static func framedLength(_ bytes: ArraySlice<UInt8>, limit: Int = maximumLength) throws(DBusWireError) -> Int? {
        guard bytes.count >= fixedHeaderLength else { return nil }
        var reader = DBusWireReader(bytes: bytes.prefix(fixedHeaderLength), byteOrder: .little)
        guard let byteOrder = DBusByteOrder(marker: bytes[bytes.startIndex]) else {
            throw .invalidHeader("the first byte is \(bytes[bytes.startIndex]), not \"l\" (little-endian) or \"B\" (big-endian)")
        }
        reader = DBusWireReader(bytes: bytes.prefix(fixedHeaderLength), byteOrder: byteOrder)
        var header = DBusMessageHeader()
        try header.codeFixedPart(&reader)
        guard header.version == DBusMessageHeader.protocolVersion else { throw .invalidHeader("protocol version \(header.version), not 1") }
        let fieldsLength = Int(try reader.integer(UInt32.self))
        guard fieldsLength <= dbusMaximumArrayLength else { throw .arrayTooLong(fieldsLength) }
        let headerLength = (fixedHeaderLength + fieldsLength + 7) & ~7
        let length = headerLength + Int(header.bodyLength)
        guard length <= limit else { throw .messageTooLong(length, limit: limit) }
        return length
    }
}

/// The header up to the body, declared once for both directions: ``code(_:)`` reads it with a
/// ``DBusWireReader`` and writes it with a ``DBusWireWriter`` (D-Bus Specification, "Message
/// Format": `yyyyuua(yv)`, then padding to 8).
struct DBusMessageHeader {
    static let protocolVersion: UInt8 = 1
    /// The header fields: an array of (code, variant) structs. (Computed: a stored static holding
    /// an indirect enum keeps its box behind a tagged pointer, which LeakSanitizer reports.)
    static var fieldsType: DBusType { .array(.struct([.byte, .variant])) }

    var marker: UInt8 = 0
    var kind: UInt8 = 0
    var flags: UInt8 = 0
    var version: UInt8 = protocolVersion
    var bodyLength: UInt32 = 0
    var serial: UInt32 = 0
    var fields: DBusValue = .array(of: fieldsType, [])

    mutating func code(_ coder: inout some DBusHeaderCoder) throws(DBusWireError) {
        try codeFixedPart(&coder)
        try coder.code(&fields, as: Self.fieldsType)
    }

    mutating func codeFixedPart(_ coder: inout some DBusHeaderCoder) throws(DBusWireError) {
        try coder.code(&marker)
        try coder.code(&kind)
        try coder.code(&flags)
        try coder.code(&version)
        try coder.code(&bodyLength)
        try coder.code(&serial)
    }
}

/// One direction of the wire format, for formats declared once (``DBusMessageHeader``).
protocol DBusHeaderCoder {
    mutating func code(_ value: inout UInt8) throws(DBusWireError)
    mutating func code(_ value: inout UInt32) throws(DBusWireError)
    mutating func code(_ value: inout DBusValue, as type: DBusType) throws(DBusWireError)
}

extension DBusWireWriter: DBusHeaderCoder {
    mutating func code(_ value: inout UInt8) { integer(value) }
    mutating func code(_ value: inout UInt32) { integer(value) }
    mutating func code(_ value: inout DBusValue, as type: DBusType) throws(DBusWireError) { try self.value(value, as: type) }
}

extension DBusWireReader: DBusHeaderCoder {
    mutating func code(_ value: inout UInt8) throws(DBusWireError) { value = try byte() }
    mutating func code(_ value: inout UInt32) throws(DBusWireError) { value = try integer(UInt32.self) }
    mutating func code(_ value: inout DBusValue, as type: DBusType) throws(DBusWireError) { value = try self.value(of: type) }
}
