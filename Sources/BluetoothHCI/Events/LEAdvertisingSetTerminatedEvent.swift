import BluetoothCore

/// LE Advertising Set Terminated (Core 6.0, Vol 4, Part E, 7.7.65.18): an extended
/// advertising set stopped, because a connection was created (status success), its duration
/// ran out (Advertising Timeout) or its event count was reached (Limit Reached).
public struct LEAdvertisingSetTerminatedEvent: HCILEMetaEventParameters, CustomStringConvertible, PacketFields {
    public static let subeventCode: UInt8 = 0x12
    public static let name = "LE Advertising Set Terminated"

    public var status: HCIStatus = .success
    public var advertisingHandle: UInt8 = 0
    /// The connection created, when the status is success.
    public var connectionHandle: UInt16 = 0
    public var numCompletedExtendedAdvertisingEvents: UInt8 = 0

    public init() {}

    public init(status: HCIStatus = .success, advertisingHandle: UInt8, connectionHandle: UInt16, numCompletedExtendedAdvertisingEvents: UInt8) {
        self.status = status
        self.advertisingHandle = advertisingHandle
        self.connectionHandle = connectionHandle
        self.numCompletedExtendedAdvertisingEvents = numCompletedExtendedAdvertisingEvents
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.uint8(&advertisingHandle)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&numCompletedExtendedAdvertisingEvents)
        try coder.end()
    }

    public var description: String {
        "LE Advertising Set Terminated set=\(advertisingHandle) \(status) handle=\(Hex.format(connectionHandle, digits: 4)) events=\(numCompletedExtendedAdvertisingEvents)"
    }
}
