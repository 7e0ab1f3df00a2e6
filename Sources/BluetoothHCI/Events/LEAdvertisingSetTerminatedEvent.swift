import BluetoothCore

/// LE Advertising Set Terminated (Core 6.0, Vol 4, Part E, 7.7.65.18): an extended
/// advertising set stopped, because a connection was created (status success), its duration
/// ran out (Advertising Timeout) or its event count was reached (Limit Reached).
public struct LEAdvertisingSetTerminatedEvent: HCILEMetaEventParameters, CustomStringConvertible {
    public static let subeventCode: UInt8 = 0x12
    public static let name = "LE Advertising Set Terminated"

    public var status: HCIStatus
    public var advertisingHandle: UInt8
    /// The connection created, when the status is success.
    public var connectionHandle: UInt16
    public var numCompletedExtendedAdvertisingEvents: UInt8

    public init(status: HCIStatus = .success, advertisingHandle: UInt8, connectionHandle: UInt16, numCompletedExtendedAdvertisingEvents: UInt8) {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle
        self.numCompletedExtendedAdvertisingEvents = numCompletedExtendedAdvertisingEvents
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = try reader.readStatus()
        advertisingHandle = try reader.readUInt8()
        connectionHandle = try reader.readConnectionHandle()
        numCompletedExtendedAdvertisingEvents = try reader.readUInt8()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status)
        writer.write(advertisingHandle)
        writer.writeConnectionHandle(connectionHandle)
        writer.write(numCompletedExtendedAdvertisingEvents)
    }

    public var description: String {
        "LE Advertising Set Terminated set=\(advertisingHandle) \(status) handle=\(Hex.format(connectionHandle, digits: 4)) events=\(numCompletedExtendedAdvertisingEvents)"
    }
}
