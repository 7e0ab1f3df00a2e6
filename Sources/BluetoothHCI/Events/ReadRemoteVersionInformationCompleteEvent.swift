import BluetoothCore

/// Read Remote Version Information Complete (Core 6.0, Vol 4, Part E, 7.7.12): the peer's
/// LL version, company identifier and subversion.
public struct ReadRemoteVersionInformationCompleteEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x0C
    public static let name = "Read Remote Version Information Complete"

    public var status: HCIStatus
    public var connectionHandle: UInt16
    /// The LL/LMP version (Assigned Numbers, "Link Layer Version"): 0x0D is Core 5.4.
    public var version: UInt8
    /// The company identifier of the peer's controller manufacturer.
    public var companyIdentifier: UInt16
    public var subversion: UInt16

    public init(status: HCIStatus = .success, connectionHandle: UInt16, version: UInt8, companyIdentifier: UInt16, subversion: UInt16) {
        self.status = status
        self.connectionHandle = connectionHandle
        self.version = version
        self.companyIdentifier = companyIdentifier
        self.subversion = subversion
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        status = try reader.readStatus()
        connectionHandle = try reader.readConnectionHandle()
        version = try reader.readUInt8()
        companyIdentifier = try reader.readUInt16()
        subversion = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(status)
        writer.writeConnectionHandle(connectionHandle)
        writer.write(version)
        writer.write(companyIdentifier)
        writer.write(subversion)
    }

    public var description: String {
        "Read Remote Version Information Complete handle=\(Hex.format(connectionHandle, digits: 4)) \(status) version=\(version) company=\(Hex.format(companyIdentifier)) subversion=\(Hex.format(subversion))"
    }
}
