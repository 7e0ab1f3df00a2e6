import BluetoothCore

/// The Supported_Commands bitmap returned by Read Local Supported Commands: 64 octets, one bit
/// per HCI command (Core 6.0, Vol 4, Part E, 6.27).
public struct SupportedCommands: Sendable, Hashable, CustomStringConvertible, PacketFields {
    /// One command's position in the bitmap.
    public struct Command: Sendable, Hashable {
        public let octet: Int
        public let bit: Int
        public init(octet: Int, bit: Int) {
            self.octet = octet
            self.bit = bit
        }
    }

    /// The size of the bitmap in octets.
    public static let octetCount = 64

    /// The 64 octets, octet 0 first, as on the wire.
    public private(set) var octets: [UInt8]

    /// No command supported.
    public init() { octets = [UInt8](repeating: 0, count: Self.octetCount) }

    /// From wire octets: cut or zero-padded to 64.
    public init(octets: [UInt8]) {
        var padded = Array(octets.prefix(Self.octetCount))
        padded.append(contentsOf: [UInt8](repeating: 0, count: Self.octetCount - padded.count))
        self.octets = padded
    }

    /// A bitmap with exactly these commands set.
    public init(_ commands: [Command]) {
        self.init()
        for command in commands { insert(command) }
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bytes(&octets, count: Self.octetCount)
    }

    public init(reading reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }

    public func write(to writer: inout ByteWriter) { writeFields(to: &writer) }

    /// Whether the bit for the command at `octet`, `bit` is set; `false` outside the bitmap.
    public func contains(octet: Int, bit: Int) -> Bool {
        guard (0..<Self.octetCount).contains(octet), (0..<8).contains(bit) else { return false }
        return octets[octet] & (1 << UInt8(bit)) != 0
    }

    public func contains(_ command: Command) -> Bool {
        contains(octet: command.octet, bit: command.bit)
    }

    /// Sets a command's bit; positions outside the bitmap are ignored.
    public mutating func insert(_ command: Command) {
        guard (0..<Self.octetCount).contains(command.octet), (0..<8).contains(command.bit) else { return }
        octets[command.octet] |= 1 << UInt8(command.bit)
    }

    public var description: String { "SupportedCommands(\(Hex.encode(octets)))" }
}

extension SupportedCommands.Command {
    // Octet and bit numbers from Core 6.0, Vol 4, Part E, 6.27 (checked against Bumble's
    // HCI_SUPPORTED_COMMANDS_MASKS).
    public static let disconnect = Self(octet: 0, bit: 5)
    public static let readRemoteVersionInformation = Self(octet: 2, bit: 7)
    public static let setEventMask = Self(octet: 5, bit: 6)
    public static let reset = Self(octet: 5, bit: 7)
    public static let readLocalVersionInformation = Self(octet: 14, bit: 3)
    public static let readLocalSupportedFeatures = Self(octet: 14, bit: 5)
    public static let readBufferSize = Self(octet: 14, bit: 7)
    public static let readBDADDR = Self(octet: 15, bit: 1)
    public static let readRSSI = Self(octet: 15, bit: 5)
    public static let writeLEHostSupport = Self(octet: 24, bit: 6)
    public static let leSetEventMask = Self(octet: 25, bit: 0)
    public static let leReadBufferSize = Self(octet: 25, bit: 1)
    public static let leReadLocalSupportedFeatures = Self(octet: 25, bit: 2)
    public static let leSetRandomAddress = Self(octet: 25, bit: 4)
    public static let leSetAdvertisingParameters = Self(octet: 25, bit: 5)
    public static let leReadAdvertisingPhysicalChannelTxPower = Self(octet: 25, bit: 6)
    public static let leSetAdvertisingData = Self(octet: 25, bit: 7)
    public static let leSetScanResponseData = Self(octet: 26, bit: 0)
    public static let leSetAdvertisingEnable = Self(octet: 26, bit: 1)
    public static let leSetScanParameters = Self(octet: 26, bit: 2)
    public static let leSetScanEnable = Self(octet: 26, bit: 3)
    public static let leCreateConnection = Self(octet: 26, bit: 4)
    public static let leCreateConnectionCancel = Self(octet: 26, bit: 5)
    public static let leReadFilterAcceptListSize = Self(octet: 26, bit: 6)
    public static let leConnectionUpdate = Self(octet: 27, bit: 2)
    public static let leReadRemoteFeatures = Self(octet: 27, bit: 5)
    public static let leEncrypt = Self(octet: 27, bit: 6)
    public static let leRand = Self(octet: 27, bit: 7)
    public static let leEnableEncryption = Self(octet: 28, bit: 0)
    public static let leLongTermKeyRequestReply = Self(octet: 28, bit: 1)
    public static let leLongTermKeyRequestNegativeReply = Self(octet: 28, bit: 2)
    public static let leRemoteConnectionParameterRequestReply = Self(octet: 33, bit: 4)
    public static let leRemoteConnectionParameterRequestNegativeReply = Self(octet: 33, bit: 5)
    public static let leSetDataLength = Self(octet: 33, bit: 6)
    public static let leReadSuggestedDefaultDataLength = Self(octet: 33, bit: 7)
    public static let leWriteSuggestedDefaultDataLength = Self(octet: 34, bit: 0)
    public static let leAddDeviceToResolvingList = Self(octet: 34, bit: 3)
    public static let leRemoveDeviceFromResolvingList = Self(octet: 34, bit: 4)
    public static let leClearResolvingList = Self(octet: 34, bit: 5)
    public static let leReadResolvingListSize = Self(octet: 34, bit: 6)
    public static let leSetAddressResolutionEnable = Self(octet: 35, bit: 1)
    public static let leSetResolvablePrivateAddressTimeout = Self(octet: 35, bit: 2)
    public static let leReadMaximumDataLength = Self(octet: 35, bit: 3)
    public static let leReadPHY = Self(octet: 35, bit: 4)
    public static let leSetDefaultPHY = Self(octet: 35, bit: 5)
    public static let leSetPHY = Self(octet: 35, bit: 6)
    public static let leSetAdvertisingSetRandomAddress = Self(octet: 36, bit: 1)
    public static let leSetExtendedAdvertisingParameters = Self(octet: 36, bit: 2)
    public static let leSetExtendedAdvertisingData = Self(octet: 36, bit: 3)
    public static let leSetExtendedScanResponseData = Self(octet: 36, bit: 4)
    public static let leSetExtendedAdvertisingEnable = Self(octet: 36, bit: 5)
    public static let leReadMaximumAdvertisingDataLength = Self(octet: 36, bit: 6)
    public static let leReadNumberOfSupportedAdvertisingSets = Self(octet: 36, bit: 7)
    public static let leRemoveAdvertisingSet = Self(octet: 37, bit: 0)
    public static let leClearAdvertisingSets = Self(octet: 37, bit: 1)
    public static let leSetExtendedScanParameters = Self(octet: 37, bit: 5)
    public static let leSetExtendedScanEnable = Self(octet: 37, bit: 6)
    public static let leExtendedCreateConnection = Self(octet: 37, bit: 7)
    public static let leSetPrivacyMode = Self(octet: 39, bit: 2)
    public static let leReadBufferSizeV2 = Self(octet: 41, bit: 5)
}
