import BluetoothCore

/// Encryption Change [v1] (Core 6.0, Vol 4, Part E, 7.7.8): encryption of a connection was
/// started, stopped, or failed to start.
public struct EncryptionChangeEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x08
    public static let name = "Encryption Change"

    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var encryptionEnabled: EncryptionEnabled

    public init(status: HCIStatus = .success, connectionHandle: UInt16, encryptionEnabled: EncryptionEnabled) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = try reader.readStatus()
        connectionHandle = try reader.readConnectionHandle()
        encryptionEnabled = try reader.readEnum(field: "Encryption_Enabled")
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeConnectionHandle(connectionHandle)
        writer.write(encryptionEnabled.rawValue)
    }

    public var description: String {
        "Encryption Change handle=\(Hex.format(connectionHandle, digits: 4)) \(status) encryption=\(encryptionEnabled)"
    }
}

/// Encryption Change [v2] (Core 6.0, Vol 4, Part E, 7.7.8): as v1, with the key size. Sent
/// instead of v1 when enabled in the page 2 event mask.
public struct EncryptionChangeV2Event: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x59
    public static let name = "Encryption Change [v2]"

    public var status: HCIStatus
    public var connectionHandle: UInt16
    public var encryptionEnabled: EncryptionEnabled
    /// In octets, 7...16.
    public var encryptionKeySize: UInt8

    public init(status: HCIStatus = .success, connectionHandle: UInt16, encryptionEnabled: EncryptionEnabled, encryptionKeySize: UInt8) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.encryptionEnabled = encryptionEnabled
        self.encryptionKeySize = encryptionKeySize
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = try reader.readStatus()
        connectionHandle = try reader.readConnectionHandle()
        encryptionEnabled = try reader.readEnum(field: "Encryption_Enabled")
        encryptionKeySize = try reader.readUInt8()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeConnectionHandle(connectionHandle)
        writer.write(encryptionEnabled.rawValue)
        writer.write(encryptionKeySize)
    }

    public var description: String {
        "Encryption Change [v2] handle=\(Hex.format(connectionHandle, digits: 4)) \(status) encryption=\(encryptionEnabled) keySize=\(encryptionKeySize)"
    }
}

/// Encryption Key Refresh Complete (Core 6.0, Vol 4, Part E, 7.7.39): an already encrypted
/// connection switched to a new key.
public struct EncryptionKeyRefreshCompleteEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x30
    public static let name = "Encryption Key Refresh Complete"

    public var status: HCIStatus
    public var connectionHandle: UInt16

    public init(status: HCIStatus = .success, connectionHandle: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = try reader.readStatus()
        connectionHandle = try reader.readConnectionHandle()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeConnectionHandle(connectionHandle)
    }

    public var description: String { "Encryption Key Refresh Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status)" }
}
