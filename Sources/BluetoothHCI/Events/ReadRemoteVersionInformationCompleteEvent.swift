import BluetoothCore

/// Read Remote Version Information Complete (Core 6.0, Vol 4, Part E, 7.7.12): the peer's
/// LL version, company identifier and subversion.
public struct ReadRemoteVersionInformationCompleteEvent: HCIEventParameters, CustomStringConvertible, PacketFields {
    public static let eventCode: UInt8 = 0x0C
    public static let name = "Read Remote Version Information Complete"

    public var status: HCIStatus = .success
    public var connectionHandle: UInt16 = 0
    /// The LL/LMP version (Assigned Numbers, "Link Layer Version"): 0x0D is Core 5.4.
    public var version: UInt8 = 0
    /// The company identifier of the peer's controller manufacturer.
    public var companyIdentifier: UInt16 = 0
    public var subversion: UInt16 = 0

    public init() {}

    public init(status: HCIStatus = .success, connectionHandle: UInt16, version: UInt8, companyIdentifier: UInt16, subversion: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.version = version
        self.companyIdentifier = companyIdentifier
        self.subversion = subversion
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.status(&status)
        try coder.connectionHandle(&connectionHandle)
        try coder.uint8(&version)
        try coder.uint16(&companyIdentifier)
        try coder.uint16(&subversion)
        try coder.end()
    }

    public var description: String {
        "Read Remote Version Information Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) version=\(version) company=\(Hex.format(companyIdentifier)) subversion=\(Hex.format(subversion))"
    }
}
