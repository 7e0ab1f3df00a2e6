/// A packet, or a fixed part of one, that declares its fields once: ``fields(_:)`` lists them
/// in wire order on a ``FieldCoder``, and both ``init(fieldsFrom:)`` (a ``ByteReader`` filling
/// a blank value) and ``writeFields(to:)`` (a ``ByteWriter`` reading the value) follow from it.
///
/// The layer protocols (`HCICommand`, `HCIEventParameters`, `ATTPDUParameters`,
/// `LESignalingCommandData`, …) take their decoder and encoder from this declaration when the
/// packet conforms to it.
public protocol PacketFields {
    /// A value with every field blank (zero, empty, or the first case): what a reader fills in.
    init()
    /// Lists the fields in wire order on `coder`.
    mutating func fields<Coder: FieldCoder>(_ coder: inout Coder) throws(PacketDecodingError)
}

extension PacketFields {
    /// Decodes the fields from `reader`, leaving what follows them unread.
    @inlinable
    public init(fieldsFrom reader: inout ByteReader) throws(PacketDecodingError) {
        self.init()
        try fields(&reader)
    }

    /// Encodes the fields into `writer`.
    @inlinable
    public func writeFields(to writer: inout ByteWriter) {
        var value = self
        // A writer throws nothing: it writes what the value holds.
        _ = try? value.fields(&writer)
    }
}

// MARK: Fields

extension FieldCoder {
    /// Throws ``PacketDecodingError/invalidValue(context:field:value:)`` when a reader finds
    /// `isValid` false; a writer writes what the value holds and checks nothing.
    @inlinable
    public func check(_ isValid: Bool, field: String, value: some BinaryInteger) throws(PacketDecodingError) {
        guard isValid || !isReading else {
            throw .invalidValue(context: context, field: field, value: UInt64(truncatingIfNeeded: value))
        }
    }

    /// A reader throws ``PacketDecodingError/trailingBytes(context:count:)`` unless every byte
    /// was read; a writer does nothing.
    @inlinable
    public func end() throws(PacketDecodingError) {
        guard remainingCount == 0 else { throw .trailingBytes(context: context, count: remainingCount) }
    }

    /// A reader throws ``PacketDecodingError/truncated(context:needed:available:)`` unless at
    /// least `count` bytes are left; a writer does nothing.
    @inlinable
    public func requireRemaining(_ count: Int) throws(PacketDecodingError) {
        guard remainingCount >= count || !isReading else {
            throw .truncated(context: context, needed: count, available: remainingCount)
        }
    }

    @inlinable
    public mutating func int8(_ value: inout Int8) throws(PacketDecodingError) {
        var raw = UInt8(bitPattern: value)
        try uint8(&raw)
        value = Int8(bitPattern: raw)
    }

    @inlinable
    public mutating func uint24(_ value: inout UInt32) throws(PacketDecodingError) {
        var raw = UInt64(value)
        try littleEndian(&raw, byteCount: 3)
        value = UInt32(truncatingIfNeeded: raw)
    }

    @inlinable
    public mutating func uint32(_ value: inout UInt32) throws(PacketDecodingError) {
        var raw = UInt64(value)
        try littleEndian(&raw, byteCount: 4)
        value = UInt32(truncatingIfNeeded: raw)
    }

    @inlinable
    public mutating func uint64(_ value: inout UInt64) throws(PacketDecodingError) {
        try littleEndian(&value, byteCount: 8)
    }

    /// 16 octets, least significant first.
    @inlinable
    public mutating func uint128(_ value: inout UInt128) throws(PacketDecodingError) {
        var low = UInt64(truncatingIfNeeded: value)
        var high = UInt64(truncatingIfNeeded: value >> 64)
        try uint64(&low)
        try uint64(&high)
        value = UInt128(high) << 64 | UInt128(low)
    }

    /// A one-octet boolean: 0x00 or 0x01; a reader refuses anything else.
    @inlinable
    public mutating func bool(_ value: inout Bool, field: String) throws(PacketDecodingError) {
        var raw: UInt8 = value ? 1 : 0
        try uint8(&raw)
        guard raw <= 1 else { throw .invalidValue(context: context, field: field, value: UInt64(raw)) }
        value = raw == 1
    }

    /// A one-octet enumeration or option set; a reader refuses a value without a case.
    @inlinable
    public mutating func uint8<Value: RawRepresentable>(_ value: inout Value, field: String) throws(PacketDecodingError)
        where Value.RawValue == UInt8 {
        var raw = value.rawValue
        try uint8(&raw)
        guard let decoded = Value(rawValue: raw) else {
            throw .invalidValue(context: context, field: field, value: UInt64(raw))
        }
        value = decoded
    }

    /// A two-octet enumeration or option set; a reader refuses a value without a case.
    @inlinable
    public mutating func uint16<Value: RawRepresentable>(_ value: inout Value, field: String) throws(PacketDecodingError)
        where Value.RawValue == UInt16 {
        var raw = value.rawValue
        try uint16(&raw)
        guard let decoded = Value(rawValue: raw) else {
            throw .invalidValue(context: context, field: field, value: UInt64(raw))
        }
        value = decoded
    }

    /// An eight-octet option set (a mask).
    @inlinable
    public mutating func uint64<Value: RawRepresentable>(_ value: inout Value, field: String) throws(PacketDecodingError)
        where Value.RawValue == UInt64 {
        var raw = value.rawValue
        try uint64(&raw)
        guard let decoded = Value(rawValue: raw) else {
            throw .invalidValue(context: context, field: field, value: raw)
        }
        value = decoded
    }

    /// A BD_ADDR: six octets, least significant first (Core 6.0, Vol 4, Part E, 5.2).
    @inlinable
    public mutating func address(_ value: inout BluetoothAddress) throws(PacketDecodingError) {
        var raw = value.rawValue
        try littleEndian(&raw, byteCount: 6)
        value = BluetoothAddress(rawValue: raw)
    }

    /// Everything left in the packet but its last `trailerCount` octets (which later fields
    /// take); a writer writes all of `value`.
    @inlinable
    public mutating func rest(_ value: inout [UInt8], leaving trailerCount: Int) throws(PacketDecodingError) {
        try requireRemaining(trailerCount)
        if isReading {
            try bytes(&value, count: remainingCount - trailerCount)
        } else {
            try rest(&value)
        }
    }

    /// Up to `count` octets: fewer when the packet ends first; a writer writes all of `value`.
    @inlinable
    public mutating func bytes(_ value: inout [UInt8], upTo count: Int) throws(PacketDecodingError) {
        if isReading {
            try bytes(&value, count: min(count, remainingCount))
        } else {
            try rest(&value)
        }
    }

    /// Octets that are reserved: a writer writes zeros, a reader skips whatever is there.
    @inlinable
    public mutating func reserved(octets count: Int) throws(PacketDecodingError) {
        for _ in 0..<count {
            var zero: UInt8 = 0
            try uint8(&zero)
        }
    }

    /// The fields of a part that declares its own.
    @inlinable
    public mutating func fields<Part: PacketFields>(_ part: inout Part) throws(PacketDecodingError) {
        try part.fields(&self)
    }

    /// A part that is on the wire only when `isPresent` (which a writer takes from `part`
    /// itself, and a reader from an earlier field).
    @inlinable
    public mutating func optional<Part: PacketFields>(_ part: inout Part?, isPresent: Bool) throws(PacketDecodingError) {
        if isReading {
            guard isPresent else { part = nil; return }
            var decoded = Part()
            try decoded.fields(&self)
            part = decoded
        } else if var present = part {
            try present.fields(&self)
        }
    }

    /// `count` parts one after another; a writer writes the first `count` of `parts`.
    @inlinable
    public mutating func list<Part: PacketFields>(_ parts: inout [Part], count: Int) throws(PacketDecodingError) {
        if isReading {
            var decoded: [Part] = []
            decoded.reserveCapacity(min(count, remainingCount))
            for _ in 0..<count {
                var part = Part()
                try part.fields(&self)
                decoded.append(part)
            }
            parts = decoded
        } else {
            for var part in parts.prefix(count) { try part.fields(&self) }
        }
    }

    /// Parts one after another to the end of the packet, each declared by `part` (for parts
    /// whose layout depends on an earlier field); a reader starts each from `blank`, a writer
    /// writes all of `parts`.
    @inlinable
    public mutating func list<Part>(_ parts: inout [Part], blank: Part,
                                    _ part: (inout Self, inout Part) throws(PacketDecodingError) -> Void) throws(PacketDecodingError) {
        if isReading {
            var decoded: [Part] = []
            while remainingCount > 0 {
                var next = blank
                try part(&self, &next)
                decoded.append(next)
            }
            parts = decoded
        } else {
            for var next in parts { try part(&self, &next) }
        }
    }

    /// Parts one after another to the end of the packet; a writer writes all of `parts`.
    @inlinable
    public mutating func list<Part: PacketFields>(_ parts: inout [Part]) throws(PacketDecodingError) {
        if isReading {
            var decoded: [Part] = []
            while remainingCount > 0 {
                var part = Part()
                try part.fields(&self)
                decoded.append(part)
            }
            parts = decoded
        } else {
            for var part in parts { try part.fields(&self) }
        }
    }
}
