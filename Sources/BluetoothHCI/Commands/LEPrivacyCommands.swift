import BluetoothCore

// The resolving list of LL privacy (Core 6.0, Vol 4, Part E, 7.8.38-7.8.44; Vol 6, Part B,
// 6.9): identity addresses with their IRKs, for the controller to resolve and generate
// resolvable private addresses. IRKs are held least significant octet first, as on the wire.

/// LE Add Device To Resolving List (Core 6.0, Vol 4, Part E, 7.8.38).
public struct LEAddDeviceToResolvingListCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0027)
    public static let name = "LE Add Device To Resolving List"

    /// Public (0x00) or random (static) identity address (0x01).
    public var peerIdentityAddressType: AddressType = .public
    public var peerIdentityAddress: BluetoothAddress = .zero
    /// 16 octets, least significant first; all zeros: the peer uses its identity address.
    public var peerIRK: [UInt8] = []
    /// 16 octets, least significant first; all zeros: this device uses its identity address.
    public var localIRK: [UInt8] = []

    public init() {}

    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress, peerIRK: [UInt8], localIRK: [UInt8]) {
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
        self.peerIRK = peerIRK
        self.localIRK = localIRK
    }

    /// The peer's identity address with its type.
    public var peerIdentity: DeviceAddress { DeviceAddress(peerIdentityAddress, type: peerIdentityAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.publicOrRandomAddressType(&peerIdentityAddressType, field: "Peer_Identity_Address_Type")
        try coder.address(&peerIdentityAddress)
        try coder.bytes(&peerIRK, count: 16)
        try coder.bytes(&localIRK, count: 16)
    }
}

/// LE Remove Device From Resolving List (Core 6.0, Vol 4, Part E, 7.8.39).
public struct LERemoveDeviceFromResolvingListCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0028)
    public static let name = "LE Remove Device From Resolving List"

    /// Public (0x00) or random (static) identity address (0x01).
    public var peerIdentityAddressType: AddressType = .public
    public var peerIdentityAddress: BluetoothAddress = .zero

    public init() {}

    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress) {
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
    }

    /// The peer's identity address with its type.
    public var peerIdentity: DeviceAddress { DeviceAddress(peerIdentityAddress, type: peerIdentityAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.publicOrRandomAddressType(&peerIdentityAddressType, field: "Peer_Identity_Address_Type")
        try coder.address(&peerIdentityAddress)
    }
}

/// LE Clear Resolving List (Core 6.0, Vol 4, Part E, 7.8.40).
public struct LEClearResolvingListCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0029)
    public static let name = "LE Clear Resolving List"

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Read Resolving List Size (Core 6.0, Vol 4, Part E, 7.8.41): how many entries the
/// controller can hold.
public struct LEReadResolvingListSizeCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x002A)
    public static let name = "LE Read Resolving List Size"

    public struct ReturnParameters: HCIReturnParameters, PacketFields {
        public var resolvingListSize: UInt8 = 0

        public init() {}

        public init(resolvingListSize: UInt8) { self.resolvingListSize = resolvingListSize }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&resolvingListSize)
        }
    }

    public init() {}
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeParameters(into writer: inout ByteWriter) {}
}

/// LE Set Address Resolution Enable (Core 6.0, Vol 4, Part E, 7.8.44): turns resolution of
/// resolvable private addresses with the resolving list on or off.
public struct LESetAddressResolutionEnableCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x002D)
    public static let name = "LE Set Address Resolution Enable"

    public var enable = false

    public init() {}

    public init(enable: Bool) { self.enable = enable }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&enable, field: "Address_Resolution_Enable")
    }
}

/// LE Set Resolvable Private Address Timeout (Core 6.0, Vol 4, Part E, 7.8.45): how long the
/// controller uses a resolvable private address it made before it makes a new one.
public struct LESetResolvablePrivateAddressTimeoutCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x002E)
    public static let name = "LE Set Resolvable Private Address Timeout"

    /// The range the command takes, in seconds: 1 s to 1 hour (900 s, 15 minutes, after reset).
    public static let timeoutRange: ClosedRange<UInt16> = 0x0001...0x0E10

    /// In seconds.
    public var timeout: UInt16 = 0x0384

    public init() {}

    public init(timeout: UInt16) { self.timeout = timeout }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&timeout)
    }
}

/// The privacy mode of one resolving list entry (Core 6.0, Vol 6, Part B, 4.7).
public enum PrivacyMode: UInt8, Sendable, Hashable, CaseIterable {
    /// The controller accepts only private addresses from a peer whose entry has an IRK: its
    /// identity address over the air is ignored. The mode after the entry is added.
    case network = 0x00
    /// The controller also accepts the peer's identity address.
    case device = 0x01
}

/// LE Set Privacy Mode (Core 6.0, Vol 4, Part E, 7.8.77): network or device privacy for a peer
/// in the resolving list.
public struct LESetPrivacyModeCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x004E)
    public static let name = "LE Set Privacy Mode"

    /// Public (0x00) or random (static) identity address (0x01).
    public var peerIdentityAddressType: AddressType = .public
    public var peerIdentityAddress: BluetoothAddress = .zero
    public var privacyMode: PrivacyMode = .network

    public init() {}

    public init(peerIdentityAddressType: AddressType, peerIdentityAddress: BluetoothAddress, privacyMode: PrivacyMode) {
        self.peerIdentityAddressType = peerIdentityAddressType
        self.peerIdentityAddress = peerIdentityAddress
        self.privacyMode = privacyMode
    }

    /// The peer's identity address with its type.
    public var peerIdentity: DeviceAddress { DeviceAddress(peerIdentityAddress, type: peerIdentityAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.publicOrRandomAddressType(&peerIdentityAddressType, field: "Peer_Identity_Address_Type")
        try coder.address(&peerIdentityAddress)
        try coder.uint8(&privacyMode, field: "Privacy_Mode")
    }
}
