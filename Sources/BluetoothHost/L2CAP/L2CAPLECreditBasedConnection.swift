import BluetoothCore

/// L2CAP_LE_CREDIT_BASED_CONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.22): open one LE
/// credit-based channel to an SPSM.
public struct L2CAPLECreditBasedConnectionRequest: LESignalingCommandData, CustomStringConvertible {
    public static let code = LESignalingCode.leCreditBasedConnectionRequest

    /// Simplified Protocol/Service Multiplexer (0x0001…0x00FF).
    public var spsm: UInt16
    public var sourceCID: L2CAPChannelID
    /// Largest SDU the sender can receive (at least 23).
    public var mtu: UInt16
    /// Largest PDU payload the sender can receive (23…65533).
    public var mps: UInt16
    public var initialCredits: UInt16

    public init(spsm: UInt16, sourceCID: L2CAPChannelID, mtu: UInt16, mps: UInt16, initialCredits: UInt16) {
        self.spsm = spsm
        self.sourceCID = sourceCID
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        spsm = try reader.readUInt16()
        sourceCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        mtu = try reader.readUInt16()
        mps = try reader.readUInt16()
        initialCredits = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(spsm)
        writer.write(sourceCID.rawValue)
        writer.write(mtu)
        writer.write(mps)
        writer.write(initialCredits)
    }

    public var description: String {
        "SPSM=\(Hex.format(spsm, digits: 4)) source=\(sourceCID) MTU=\(mtu) MPS=\(mps) credits=\(initialCredits)"
    }
}

/// L2CAP_LE_CREDIT_BASED_CONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.23). When the result is
/// a refusal the other fields are ignored by the receiver.
public struct L2CAPLECreditBasedConnectionResponse: LESignalingCommandData, CustomStringConvertible {
    public static let code = LESignalingCode.leCreditBasedConnectionResponse

    public var destinationCID: L2CAPChannelID
    public var mtu: UInt16
    public var mps: UInt16
    public var initialCredits: UInt16
    public var result: L2CAPCreditBasedConnectionResult

    public init(destinationCID: L2CAPChannelID, mtu: UInt16, mps: UInt16, initialCredits: UInt16,
                result: L2CAPCreditBasedConnectionResult) {
        self.destinationCID = destinationCID
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.result = result
    }

    /// A refusal: every field but the result is zero.
    public static func refused(_ result: L2CAPCreditBasedConnectionResult) -> Self {
        Self(destinationCID: .null, mtu: 0, mps: 0, initialCredits: 0, result: result)
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        destinationCID = L2CAPChannelID(rawValue: try reader.readUInt16())
        mtu = try reader.readUInt16()
        mps = try reader.readUInt16()
        initialCredits = try reader.readUInt16()
        result = L2CAPCreditBasedConnectionResult(rawValue: try reader.readUInt16())
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(destinationCID.rawValue)
        writer.write(mtu)
        writer.write(mps)
        writer.write(initialCredits)
        writer.write(result.rawValue)
    }

    public var description: String {
        "destination=\(destinationCID) MTU=\(mtu) MPS=\(mps) credits=\(initialCredits) \(result)"
    }
}

/// L2CAP_FLOW_CONTROL_CREDIT_IND (Core 6.0, Vol 3, Part A, 4.24): the sender can receive
/// `credits` more K-frames on channel `cid` (its own, i.e. the receiver's destination).
public struct L2CAPFlowControlCreditIndication: LESignalingCommandData, CustomStringConvertible {
    public static let code = LESignalingCode.flowControlCreditIndication

    public var cid: L2CAPChannelID
    public var credits: UInt16

    public init(cid: L2CAPChannelID, credits: UInt16) {
        self.cid = cid
        self.credits = credits
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        cid = L2CAPChannelID(rawValue: try reader.readUInt16())
        credits = try reader.readUInt16()
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(cid.rawValue)
        writer.write(credits)
    }

    public var description: String { "cid=\(cid) credits=\(credits)" }
}
