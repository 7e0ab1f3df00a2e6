import BluetoothCore

// Zephyr's vendor-specific HCI commands, answered by controllers that run Zephyr's Bluetooth
// controller (`hci_uart`, `hci_usb` on nRF5x and others). A host asks them of a controller
// without a public address, to learn the static random address the chip was given in the
// factory. The formats are those of Zephyr's `include/zephyr/bluetooth/hci_vs.h`; any other
// controller answers them Unknown HCI Command (Core 6.0, Vol 4, Part E, 4.5).

extension HCIOpcode {
    /// The vendor-specific command group, OGF 0x3F (Core 6.0, Vol 4, Part E, 5.4.1).
    public static let vendorSpecific: UInt8 = 0x3F
}

/// Zephyr's Read Version Information (0xFC01): the hardware and firmware the controller runs.
public struct ZephyrReadVersionInformationCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.vendorSpecific, command: 0x0001)
    public static let name = "Zephyr Read Version Information"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// 0x0001 Intel, 0x0002 Nordic, 0x0003 NXP, 0x0004 Espressif.
        public var hardwarePlatform: UInt16 = 0
        /// Per platform; for Nordic 0x0001 nRF51x, 0x0002 nRF52x, 0x0003 nRF53x.
        public var hardwareVariant: UInt16 = 0
        /// 0x0001 a standard Bluetooth controller, 0x0002 a vendor-specific one, 0x0003 a
        /// firmware loader, 0x0004 a rescue image.
        public var firmwareVariant: UInt8 = 0
        public var firmwareVersion: UInt8 = 0
        public var firmwareRevision: UInt16 = 0
        public var firmwareBuild: UInt32 = 0

        public init() {}

        public init(hardwarePlatform: UInt16, hardwareVariant: UInt16, firmwareVariant: UInt8, firmwareVersion: UInt8,
                    firmwareRevision: UInt16, firmwareBuild: UInt32) {
            self.hardwarePlatform = hardwarePlatform
            self.hardwareVariant = hardwareVariant
            self.firmwareVariant = firmwareVariant
            self.firmwareVersion = firmwareVersion
            self.firmwareRevision = firmwareRevision
            self.firmwareBuild = firmwareBuild
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint16(&hardwarePlatform)
            try coder.uint16(&hardwareVariant)
            try coder.uint8(&firmwareVariant)
            try coder.uint8(&firmwareVersion)
            try coder.uint16(&firmwareRevision)
            try coder.uint32(&firmwareBuild)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Zephyr's Read Supported Commands (0xFC02): a 64-octet bitmap of the vendor commands the
/// controller answers, bit n for the command 0xFC00 + n + 1 (bit 8: Read Static Addresses).
public struct ZephyrReadSupportedCommandsCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.vendorSpecific, command: 0x0002)
    public static let name = "Zephyr Read Supported Commands"

    /// The bit of Read Static Addresses (`BT_VS_CMD_BIT_READ_STATIC_ADDRS`).
    public static let readStaticAddressesBit = 8

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        /// The 64 octets, octet 0 first.
        public var octets: [UInt8] = []

        public init() {}

        public init(octets: [UInt8]) {
            var padded = Array(octets.prefix(64))
            padded.append(contentsOf: [UInt8](repeating: 0, count: 64 - padded.count))
            self.octets = padded
        }

        /// A bitmap with exactly these bits set.
        public init(bits: [Int]) {
            var octets = [UInt8](repeating: 0, count: 64)
            for bit in bits where (0..<512).contains(bit) { octets[bit / 8] |= 1 << UInt8(bit % 8) }
            self.octets = octets
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.bytes(&octets, count: 64)
        }

        public func contains(bit: Int) -> Bool {
            guard (0..<octets.count * 8).contains(bit) else { return false }
            return octets[bit / 8] & (1 << UInt8(bit % 8)) != 0
        }

        /// Whether the controller answers Read Static Addresses.
        public var supportsReadStaticAddresses: Bool { contains(bit: ZephyrReadSupportedCommandsCommand.readStaticAddressesBit) }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// Zephyr's Read Static Addresses (0xFC09): the static random addresses the chip was given in
/// the factory (an nRF5x's FICR DEVICEADDR), each with an identity root.
public struct ZephyrReadStaticAddressesCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.vendorSpecific, command: 0x0009)
    public static let name = "Zephyr Read Static Addresses"

    /// One address and its 16-octet identity root (IR, as the controller stores it).
    public struct StaticAddress: Sendable, Equatable, PacketFields {
        public var address = BluetoothAddress.zero
        /// 16 octets (cut or zero-padded to 16 when encoded).
        public var identityRoot: [UInt8] = []

        public init() {}

        public init(address: BluetoothAddress, identityRoot: [UInt8]) {
            self.address = address
            self.identityRoot = identityRoot
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.address(&address)
            try coder.bytes(&identityRoot, count: 16)
        }
    }

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var addresses: [StaticAddress] = []

        public init() {}

        public init(addresses: [StaticAddress]) { self.addresses = addresses }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            // Num_Addresses, then that many address and IR pairs (22 octets each).
            var count = UInt8(clamping: addresses.count)
            try coder.uint8(&count)
            try coder.list(&addresses, count: Int(count))
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}
