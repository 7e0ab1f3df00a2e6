import BluetoothCore

/// ATT_FIND_INFORMATION_REQ (Core 6.0, Vol 3, Part F, 3.4.3.1): the handles and types of the
/// attributes in a handle range.
public struct ATTFindInformationRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.findInformationRequest

    public var startingHandle: UInt16 = 0
    public var endingHandle: UInt16 = 0

    public init() {}

    public init(startingHandle: UInt16, endingHandle: UInt16) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&startingHandle)
        try coder.uint16(&endingHandle)
        try coder.end()
    }

    public var description: String { "\(ATTWire.hex(startingHandle))…\(ATTWire.hex(endingHandle))" }
}

/// ATT_FIND_INFORMATION_RSP (Core 6.0, Vol 3, Part F, 3.4.3.2): handle/UUID pairs, all of one
/// UUID width given by the Format octet.
///
/// A response cannot mix widths. ``init(entries:)`` picks format 0x01 when every type has a
/// 16-bit alias and otherwise sends all types as 128-bit UUIDs, which the specification allows
/// ("the server may convert a 16-bit UUID to the corresponding 128-bit UUID"). A decoded
/// response keeps its format so it re-encodes to the same bytes.
public struct ATTFindInformationResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.findInformationResponse

    /// The Format field (Vol 3, Part F, Table 3.9).
    public enum Format: UInt8, Hashable, Sendable {
        /// Handles with 16-bit Bluetooth UUIDs.
        case uuid16 = 0x01
        /// Handles with 128-bit UUIDs.
        case uuid128 = 0x02

        var uuidSize: Int { self == .uuid16 ? 2 : 16 }
    }

    /// One handle with its attribute type.
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var type: BluetoothUUID

        public init(handle: UInt16, type: BluetoothUUID) {
            self.handle = handle
            self.type = type
        }
    }

    public private(set) var format = Format.uuid16
    public private(set) var entries: [Entry] = []

    /// A response with no entries, which decoding fills in (a response must have one).
    public init() {}

    /// Picks the narrowest format that holds every entry.
    public init(entries: [Entry]) {
        self.entries = entries
        self.format = entries.allSatisfy { $0.type.uint16 != nil } ? .uuid16 : .uuid128
    }

    /// A response in a given format; `nil` if format 0x01 is asked for a type without a
    /// 16-bit alias.
    public init?(format: Format, entries: [Entry]) {
        if format == .uuid16, !entries.allSatisfy({ $0.type.uint16 != nil }) { return nil }
        self.format = format
        self.entries = entries
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&format, field: "format")
        let uuidSize = format.uuidSize
        try coder.checkList(entrySize: 2 + uuidSize, field: "Information Data")
        try coder.list(&entries, blank: Entry(handle: 0, type: BluetoothUUID(UInt16(0)))) { coder, entry throws(PacketDecodingError) in
            try coder.uint16(&entry.handle)
            try coder.uuid(&entry.type, count: uuidSize)
        }
    }

    public var description: String {
        entries.map { "\(ATTWire.hex($0.handle))=\($0.type)" }.joined(separator: " ")
    }
}

/// ATT_FIND_BY_TYPE_VALUE_REQ (Core 6.0, Vol 3, Part F, 3.4.3.3): the handles of attributes
/// of a 16-bit type with a given value (GATT uses it to find a primary service by UUID).
public struct ATTFindByTypeValueRequest: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.findByTypeValueRequest

    public var startingHandle: UInt16 = 0
    public var endingHandle: UInt16 = 0
    /// The attribute type; this PDU carries only a 16-bit UUID.
    public var attributeType: UInt16 = 0
    public var attributeValue: [UInt8] = []

    public init() {}

    public init(startingHandle: UInt16, endingHandle: UInt16, attributeType: UInt16, attributeValue: [UInt8]) {
        self.startingHandle = startingHandle
        self.endingHandle = endingHandle
        self.attributeType = attributeType
        self.attributeValue = attributeValue
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&startingHandle)
        try coder.uint16(&endingHandle)
        try coder.uint16(&attributeType)
        try coder.rest(&attributeValue)
    }

    public var description: String {
        "\(ATTWire.hex(startingHandle))…\(ATTWire.hex(endingHandle)) type=\(BluetoothUUID(attributeType)) "
            + "value=\(ATTWire.bytes(attributeValue))"
    }
}

/// ATT_FIND_BY_TYPE_VALUE_RSP (Core 6.0, Vol 3, Part F, 3.4.3.4): a list of one or more
/// Handles Information (found handle, group end handle).
public struct ATTFindByTypeValueResponse: ATTPDUParameters, PacketFields {
    public static let opcode = ATTOpcode.findByTypeValueResponse

    /// One Handles Information (Vol 3, Part F, Table 3.14).
    public struct HandlesInformation: Hashable, Sendable, PacketFields {
        public var foundAttributeHandle: UInt16 = 0
        /// Equal to the found handle unless the type is a grouping attribute.
        public var groupEndHandle: UInt16 = 0

        public init() {}

        public init(foundAttributeHandle: UInt16, groupEndHandle: UInt16) {
            self.foundAttributeHandle = foundAttributeHandle
            self.groupEndHandle = groupEndHandle
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&foundAttributeHandle)
            try coder.uint16(&groupEndHandle)
        }
    }

    public var handlesInformation: [HandlesInformation] = []

    public init() {}

    public init(handlesInformation: [HandlesInformation]) { self.handlesInformation = handlesInformation }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.checkList(entrySize: 4, field: "Handles Information List")
        try coder.list(&handlesInformation)
    }

    public var description: String {
        handlesInformation.map { "\(ATTWire.hex($0.foundAttributeHandle))…\(ATTWire.hex($0.groupEndHandle))" }
            .joined(separator: " ")
    }
}
