import BluetoothCore

/// L2CAP_DISCONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.6): close a credit-based channel.
/// The CIDs are named from the point of view of the sender of the request.
public struct L2CAPDisconnectionRequest: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.disconnectionRequest

    public var destinationCID: L2CAPChannelID = .null
    public var sourceCID: L2CAPChannelID = .null

    public init() {}

    public init(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&destinationCID, field: "Destination CID")
        try coder.uint16(&sourceCID, field: "Source CID")
        try coder.end()
    }

    public var description: String { "destination=\(destinationCID) source=\(sourceCID)" }
}

/// L2CAP_DISCONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.7): echoes the CIDs of the request.
public struct L2CAPDisconnectionResponse: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.disconnectionResponse

    public var destinationCID: L2CAPChannelID = .null
    public var sourceCID: L2CAPChannelID = .null

    public init() {}

    public init(destinationCID: L2CAPChannelID, sourceCID: L2CAPChannelID) {
        self.destinationCID = destinationCID
        self.sourceCID = sourceCID
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&destinationCID, field: "Destination CID")
        try coder.uint16(&sourceCID, field: "Source CID")
        try coder.end()
    }

    public var description: String { "destination=\(destinationCID) source=\(sourceCID)" }
}
