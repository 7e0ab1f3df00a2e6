import BluetoothCore

// Byte order of 128-bit keys: every 16-octet field here (Key, Plaintext_Data,
// Encrypted_Data, Long_Term_Key) is held in HCI wire order, least significant octet first,
// the order SMP uses for keys on the air (Core 6.0, Vol 3, Part H, 3.1). The AES-128 of
// FIPS-197 takes the most significant octet first (Core 6.0, Vol 4, Part E, 7.8.22): reverse
// these arrays to get FIPS-197 order. Arrays that are not 16 octets long are cut or
// zero-padded to 16 when encoded; decoded arrays are always 16 octets.

/// LE Enable Encryption (Core 6.0, Vol 4, Part E, 7.8.24; "LE Start Encryption" before 5.2):
/// the central starts or refreshes encryption with a long term key. Answered by Command
/// Status; Encryption Change or Encryption Key Refresh Complete follows.
public struct LEEnableEncryptionCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0019)
    public static let name = "LE Enable Encryption"
    public static let acknowledgement = HCICommandAcknowledgement.commandStatus

    public var connectionHandle: UInt16 = 0
    /// Rand of legacy pairing; 0 for LE Secure Connections keys.
    public var randomNumber: UInt64 = 0
    /// EDIV of legacy pairing; 0 for LE Secure Connections keys.
    public var encryptedDiversifier: UInt16 = 0
    /// 16 octets, least significant first.
    public var longTermKey: [UInt8] = []

    public init() {}

    public init(connectionHandle: UInt16, randomNumber: UInt64 = 0, encryptedDiversifier: UInt16 = 0, longTermKey: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.randomNumber = randomNumber
        self.encryptedDiversifier = encryptedDiversifier
        self.longTermKey = longTermKey
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.uint64(&randomNumber)
        try coder.uint16(&encryptedDiversifier)
        try coder.bytes(&longTermKey, count: 16)
    }
}

/// LE Long Term Key Request Reply (Core 6.0, Vol 4, Part E, 7.8.25): the peripheral answers
/// an LE Long Term Key Request with the key.
public struct LELongTermKeyRequestReplyCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x001A)
    public static let name = "LE Long Term Key Request Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16 = 0
    /// 16 octets, least significant first.
    public var longTermKey: [UInt8] = []

    public init() {}

    public init(connectionHandle: UInt16, longTermKey: [UInt8]) {
        self.connectionHandle = connectionHandle
        self.longTermKey = longTermKey
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
        try coder.bytes(&longTermKey, count: 16)
    }
}

/// LE Long Term Key Request Negative Reply (Core 6.0, Vol 4, Part E, 7.8.26): the peripheral
/// has no key for the request.
public struct LELongTermKeyRequestNegativeReplyCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x001B)
    public static let name = "LE Long Term Key Request Negative Reply"
    public typealias ReturnParameters = HCIConnectionHandleReturnParameters

    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.connectionHandle(&connectionHandle)
    }
}

/// LE Rand (Core 6.0, Vol 4, Part E, 7.8.23): eight random octets from the controller.
public struct LERandCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0018)
    public static let name = "LE Rand"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var randomNumber: UInt64 = 0

        public init() {}

        public init(randomNumber: UInt64) { self.randomNumber = randomNumber }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint64(&randomNumber)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Encrypt (Core 6.0, Vol 4, Part E, 7.8.22): AES-128 of one block in the controller.
/// `key`, `plaintext` and the returned `encryptedData` are 16 octets each, least significant
/// octet first (HCI order); reverse them for FIPS-197 order.
public struct LEEncryptCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0017)
    public static let name = "LE Encrypt"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// 16 octets, least significant first.
        public var encryptedData: [UInt8] = []

        public init() {}

        public init(encryptedData: [UInt8]) { self.encryptedData = encryptedData }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.bytes(&encryptedData, count: 16)
        }
    }

    /// 16 octets, least significant first.
    public var key: [UInt8] = []
    /// 16 octets, least significant first.
    public var plaintext: [UInt8] = []

    public init() {}

    public init(key: [UInt8], plaintext: [UInt8]) {
        self.key = key
        self.plaintext = plaintext
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bytes(&key, count: 16)
        try coder.bytes(&plaintext, count: 16)
    }
}
