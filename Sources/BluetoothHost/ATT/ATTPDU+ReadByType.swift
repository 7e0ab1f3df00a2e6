import BluetoothCore

/// ATT_READ_BY_TYPE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.1): the values of the attributes of
/// a type in a handle range. The type is a 2- or 16-octet UUID.
public struct ATTReadByTypeRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readByTypeRequest

    public var startingHandle: UInt16 = 0
    public var endingHandle: UInt16 = 0
    /// Sent as 2 octets when it has a 16-bit alias, else as 16.
    public var attributeType = BluetoothUUID(UInt16(0))

    public init() {}

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&startingHandle)
        try coder.uint16(&endingHandle)
        try coder.trailingUUID(&attributeType, field: "attribute type")
    }

    public var description: String {
        "\(ATTWire.hex(startingHandle))…\(ATTWire.hex(endingHandle)) type=\(attributeType)"
    }
}

/// ATT_READ_BY_TYPE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.2): a Length octet and a list of
/// handle-value pairs that are all that long.
///
/// Decoding checks that the length is at least 2 (the handle) and that the list is not empty
/// and divides evenly. ``init(entries:)`` refuses values of differing lengths and values over
/// 253 octets, which the one-octet Length field cannot describe.
public struct ATTReadByTypeResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readByTypeResponse
    /// The longest value a pair can hold: 255 − 2 (Vol 3, Part F, 3.4.4.2).
    public static let maximumValueLength = 253

    /// One handle-value pair (Vol 3, Part F, Table 3.17).
    public struct AttributeData: Hashable, Sendable {
        public var handle: UInt16
        public var value: [UInt8]

        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    public private(set) var entries: [AttributeData] = []

    /// A response with no entries, which decoding fills in (a response must have one).
    public init() {}

    /// `nil` when `entries` is empty, the values differ in length or one is longer than 253.
    public init?(entries: [AttributeData]) {
        guard let first = entries.first, first.value.count <= Self.maximumValueLength,
              entries.allSatisfy({ $0.value.count == first.value.count }) else { return nil }
        self.entries = entries
    }

    /// The Length field: the size of each pair.
    public var length: UInt8 { UInt8(truncatingIfNeeded: 2 + (entries.first?.value.count ?? 0)) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        var length = self.length
        try coder.uint8(&length)
        try coder.check(length >= 2, field: "length", value: length)
        try coder.checkList(entrySize: Int(length), field: "Attribute Data List")
        try coder.list(&entries, blank: AttributeData(handle: 0, value: [])) { coder, entry throws(PacketDecodingError) in
            try coder.uint16(&entry.handle)
            try coder.bytes(&entry.value, count: Int(length) - 2)
        }
    }

    public var description: String {
        entries.map { "\(ATTWire.hex($0.handle))=\(ATTWire.bytes($0.value))" }.joined(separator: " ")
    }
}

/// ATT_READ_BY_GROUP_TYPE_REQ (Core 6.0, Vol 3, Part F, 3.4.4.9): the grouping attributes
/// of a type (GATT: primary services) in a handle range.
public struct ATTReadByGroupTypeRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readByGroupTypeRequest

    public var startingHandle: UInt16 = 0
    public var endingHandle: UInt16 = 0
    /// Sent as 2 octets when it has a 16-bit alias, else as 16.
    public var attributeGroupType = BluetoothUUID(UInt16(0))

    public init() {}

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeGroupType: BluetoothUUID) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeGroupType = attributeGroupType
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&startingHandle)
        try coder.uint16(&endingHandle)
        try coder.trailingUUID(&attributeGroupType, field: "attribute group type")
    }

    public var description: String {
        "\(ATTWire.hex(startingHandle))…\(ATTWire.hex(endingHandle)) group type=\(attributeGroupType)"
    }
}

/// ATT_READ_BY_GROUP_TYPE_RSP (Core 6.0, Vol 3, Part F, 3.4.4.10): a Length octet and a list
/// of (handle, end group handle, value) entries that are all that long.
///
/// Decoding checks that the length is at least 4 and that the list is not empty and divides
/// evenly. ``init(entries:)`` refuses values of differing lengths or over 251 octets.
public struct ATTReadByGroupTypeResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.readByGroupTypeResponse
    /// The longest value an entry can hold: 255 − 4 (Vol 3, Part F, 3.4.4.10).
    public static let maximumValueLength = 251

    /// One Attribute Data (Vol 3, Part F, Table 3.26).
    public struct GroupData: Hashable, Sendable {
        public var handle: UInt16
        public var endGroupHandle: UInt16
        public var value: [UInt8]

        public init(handle: UInt16, endGroupHandle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.endGroupHandle = endGroupHandle
            self.value = value
        }
    }

    public private(set) var entries: [GroupData] = []

    /// A response with no entries, which decoding fills in (a response must have one).
    public init() {}

    /// `nil` when `entries` is empty, the values differ in length or one is longer than 251.
    public init?(entries: [GroupData]) {
        guard let first = entries.first, first.value.count <= Self.maximumValueLength,
              entries.allSatisfy({ $0.value.count == first.value.count }) else { return nil }
        self.entries = entries
    }

    /// The Length field: the size of each entry.
    public var length: UInt8 { UInt8(truncatingIfNeeded: 4 + (entries.first?.value.count ?? 0)) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        var length = self.length
        try coder.uint8(&length)
        try coder.check(length >= 4, field: "length", value: length)
        try coder.checkList(entrySize: Int(length), field: "Attribute Data List")
        try coder.list(&entries, blank: GroupData(handle: 0, endGroupHandle: 0, value: [])) { coder, entry throws(PacketDecodingError) in
            try coder.uint16(&entry.handle)
            try coder.uint16(&entry.endGroupHandle)
            try coder.bytes(&entry.value, count: Int(length) - 4)
        }
    }

    public var description: String {
        entries.map { "\(ATTWire.hex($0.handle))…\(ATTWire.hex($0.endGroupHandle))=\(ATTWire.bytes($0.value))" }
            .joined(separator: " ")
    }
}
