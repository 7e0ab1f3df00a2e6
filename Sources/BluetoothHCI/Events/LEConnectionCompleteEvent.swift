import BluetoothCore

/// LE Connection Complete (Core 6.0, Vol 4, Part E, 7.7.65.1): a connection was created, or
/// creating one failed or was cancelled (then the other fields carry no meaning).
public struct LEConnectionCompleteEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x01
    public static let name = "LE Connection Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var role: ConnectionRole = .central
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    /// In units of 1.25 ms.
    public var connectionInterval: UInt16 = 0
    /// In connection events.
    public var peripheralLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0
    public var centralClockAccuracy: ClockAccuracy = .ppm500

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, role: ConnectionRole, peerAddressType: AddressType,
                peerAddress: BluetoothAddress, connectionInterval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16,
                centralClockAccuracy: ClockAccuracy = .ppm500) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// The peer as an address with its type.
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&role, field: "Role")
        try coder.uint8(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.uint16(&connectionInterval)
        try coder.uint16(&peripheralLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.uint8(&centralClockAccuracy, field: "Central_Clock_Accuracy")
        try coder.end()
    }

    public var description: String {
        "LE Connection Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) role=\(role) peer=\(peer) interval=\(connectionInterval) latency=\(peripheralLatency) timeout=\(supervisionTimeout)"
    }
}

/// LE Enhanced Connection Complete [v1] (Core 6.0, Vol 4, Part E, 7.7.65.10): as LE
/// Connection Complete, with the resolvable private addresses used when LL privacy is on.
public struct LEEnhancedConnectionCompleteEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x0A
    public static let name = "LE Enhanced Connection Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var role: ConnectionRole = .central
    /// Public, random, or an identity type when the controller resolved the peer's address.
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    /// The local RPA used for the connection; zero if none.
    public var localResolvablePrivateAddress: BluetoothAddress = .zero
    /// The peer's RPA used for the connection; zero if none.
    public var peerResolvablePrivateAddress: BluetoothAddress = .zero
    /// In units of 1.25 ms.
    public var connectionInterval: UInt16 = 0
    public var peripheralLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0
    public var centralClockAccuracy: ClockAccuracy = .ppm500

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, role: ConnectionRole, peerAddressType: AddressType,
                peerAddress: BluetoothAddress, localResolvablePrivateAddress: BluetoothAddress = .zero,
                peerResolvablePrivateAddress: BluetoothAddress = .zero, connectionInterval: UInt16, peripheralLatency: UInt16,
                supervisionTimeout: UInt16, centralClockAccuracy: ClockAccuracy = .ppm500) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
    }

    /// The peer as an address with its type (its identity address when resolved).
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&role, field: "Role")
        try coder.uint8(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.address(&localResolvablePrivateAddress)
        try coder.address(&peerResolvablePrivateAddress)
        try coder.uint16(&connectionInterval)
        try coder.uint16(&peripheralLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.uint8(&centralClockAccuracy, field: "Central_Clock_Accuracy")
        try coder.end()
    }

    public var description: String {
        "LE Enhanced Connection Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) role=\(role) peer=\(peer) interval=\(connectionInterval) latency=\(peripheralLatency) timeout=\(supervisionTimeout)"
    }
}

/// LE Enhanced Connection Complete [v2] (Core 6.0, Vol 4, Part E, 7.7.65.10): as v1, with the
/// advertising set and periodic sync the connection came from.
public struct LEEnhancedConnectionCompleteV2Event: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x29
    public static let name = "LE Enhanced Connection Complete [v2]"

    /// "No advertising set" value of ``advertisingHandle``.
    public static let noAdvertisingHandle: UInt8 = 0xFF
    /// "No periodic advertising train" value of ``syncHandle``.
    public static let noSyncHandle: UInt16 = 0xFFFF

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var role: ConnectionRole = .central
    public var peerAddressType: AddressType = .public
    public var peerAddress: BluetoothAddress = .zero
    public var localResolvablePrivateAddress: BluetoothAddress = .zero
    public var peerResolvablePrivateAddress: BluetoothAddress = .zero
    /// In units of 1.25 ms.
    public var connectionInterval: UInt16 = 0
    public var peripheralLatency: UInt16 = 0
    /// In units of 10 ms.
    public var supervisionTimeout: UInt16 = 0
    public var centralClockAccuracy: ClockAccuracy = .ppm500
    /// The advertising set a peripheral connection came through, else 0xFF.
    public var advertisingHandle: UInt8 = 0
    /// The periodic advertising train (PAwR) the connection came from, else 0xFFFF.
    public var syncHandle: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, role: ConnectionRole, peerAddressType: AddressType,
                peerAddress: BluetoothAddress, localResolvablePrivateAddress: BluetoothAddress = .zero,
                peerResolvablePrivateAddress: BluetoothAddress = .zero, connectionInterval: UInt16, peripheralLatency: UInt16,
                supervisionTimeout: UInt16, centralClockAccuracy: ClockAccuracy = .ppm500,
                advertisingHandle: UInt8 = noAdvertisingHandle, syncHandle: UInt16 = noSyncHandle) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.role = role
        self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress
        self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
        self.connectionInterval = connectionInterval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
        self.centralClockAccuracy = centralClockAccuracy
        self.advertisingHandle = advertisingHandle
        self.syncHandle = syncHandle
    }

    /// The peer as an address with its type (its identity address when resolved).
    public var peer: DeviceAddress { DeviceAddress(peerAddress, type: peerAddressType) }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&role, field: "Role")
        try coder.uint8(&peerAddressType, field: "Peer_Address_Type")
        try coder.address(&peerAddress)
        try coder.address(&localResolvablePrivateAddress)
        try coder.address(&peerResolvablePrivateAddress)
        try coder.uint16(&connectionInterval)
        try coder.uint16(&peripheralLatency)
        try coder.uint16(&supervisionTimeout)
        try coder.uint8(&centralClockAccuracy, field: "Central_Clock_Accuracy")
        try coder.uint8(&advertisingHandle)
        try coder.uint16(&syncHandle)
        try coder.end()
    }

    public var description: String {
        "LE Enhanced Connection Complete [v2] handle=\(Hex.format(connectionHandle, digits: 4)) \(status) role=\(role) peer=\(peer) interval=\(connectionInterval) latency=\(peripheralLatency) timeout=\(supervisionTimeout) advertisingHandle=\(advertisingHandle)"
    }
}
