import BluetoothCore

/// Encryption Change [v1] (Core 6.0, Vol 4, Part E, 7.7.8): encryption of a connection was
/// started, stopped, or failed to start.
public struct EncryptionChangeEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x08
    public static let name = "Encryption Change"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var encryptionEnabled: EncryptionEnabled = .off

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, encryptionEnabled: EncryptionEnabled) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&encryptionEnabled, field: "Encryption_Enabled")
        try coder.end()
    }

    public var description: String {
        "Encryption Change handle=\(Hex.format(connectionHandle, digits: 4)) \(status) encryption=\(encryptionEnabled)"
    }
}

/// Encryption Change [v2] (Core 6.0, Vol 4, Part E, 7.7.8): as v1, with the key size. Sent
/// instead of v1 when enabled in the page 2 event mask.
public struct EncryptionChangeV2Event: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x59
    public static let name = "Encryption Change [v2]"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    public var encryptionEnabled: EncryptionEnabled = .off
    /// In octets, 7...16.
    public var encryptionKeySize: UInt8 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, encryptionEnabled: EncryptionEnabled, encryptionKeySize: UInt8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
        self.encryptionKeySize = encryptionKeySize
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&encryptionEnabled, field: "Encryption_Enabled")
        try coder.uint8(&encryptionKeySize)
        try coder.end()
    }

    public var description: String {
        "Encryption Change [v2] handle=\(Hex.format(connectionHandle, digits: 4)) \(status) encryption=\(encryptionEnabled) keySize=\(encryptionKeySize)"
    }
}

/// Encryption Key Refresh Complete (Core 6.0, Vol 4, Part E, 7.7.39): an already encrypted
/// connection switched to a new key.
public struct EncryptionKeyRefreshCompleteEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x30
    public static let name = "Encryption Key Refresh Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.end()
    }

    public var description: String { "Encryption Key Refresh Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status)" }
}
