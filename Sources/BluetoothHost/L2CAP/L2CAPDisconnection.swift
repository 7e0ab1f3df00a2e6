import BluetoothCore

/// L2CAP_DISCONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.6): close a credit-based channel.
/// The CIDs are named from the point of view of the sender of the request.
public struct L2CAPDisconnectionRequest: LESignalingCommandData, CustomStringConvertible {
    public static let code = LESignalingCode.disconnectionRequest

    public var destinationCID: L2CAPChannelID
    public var sourceCID: L2CAPChannelID

    public init(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        destinationCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        sourceCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(destinationCID.rawValue)
        writer.write(sourceCID.rawValue)
    }

    public var description: String { "destination=\(destinationCID) source=\(sourceCID)" }
}

/// L2CAP_DISCONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.7): echoes the CIDs of the request.
public struct L2CAPDisconnectionResponse: LESignalingCommandData, CustomStringConvertible {
    public static let code = LESignalingCode.disconnectionResponse

    public var destinationCID: L2CAPChannelID
    public var sourceCID: L2CAPChannelID

    public init(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        destinationCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        sourceCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(destinationCID.rawValue)
        writer.write(sourceCID.rawValue)
    }

    public var description: String { "destination=\(destinationCID) source=\(sourceCID)" }
}
