import BluetoothCore

/// L2CAP_LE_CREDIT_BASED_CONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.22): open one LE
/// credit-based channel to an SPSM.
public struct L2CAPLECreditBasedConnectionRequest: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.leCreditBasedConnectionRequest

    /// Simplified Protocol/Service Multiplexer (0x0001…0x00FF).
    public var spsm: UInt16 = 0
    public var sourceCID: L2CAPChannelID = .null
    /// Largest SDU the sender can receive (at least 23).
    public var mtu: UInt16 = 0
    /// Largest PDU payload the sender can receive (23…65533).
    public var mps: UInt16 = 0
    public var initialCredits: UInt16 = 0

    public init() {}

    public init(spsm: UInt16, sourceCID: L2CAPChannelID, mtu: UInt16, mps: UInt16, initialCredits: UInt16) {
        self.spsm = spsm
        self.sourceCID = sourceCID
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&spsm)
        try coder.uint16(&sourceCID, field: "Source CID")
        try coder.uint16(&mtu)
        try coder.uint16(&mps)
        try coder.uint16(&initialCredits)
        try coder.end()
    }

    public var description: String {
        "SPSM=\(Hex.format(spsm, digits: 4)) source=\(sourceCID) MTU=\(mtu) MPS=\(mps) credits=\(initialCredits)"
    }
}

/// L2CAP_LE_CREDIT_BASED_CONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.23). When the result is
/// a refusal the other fields are ignored by the receiver.
public struct L2CAPLECreditBasedConnectionResponse: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.leCreditBasedConnectionResponse

    public var destinationCID: L2CAPChannelID = .null
    public var mtu: UInt16 = 0
    public var mps: UInt16 = 0
    public var initialCredits: UInt16 = 0
    public var result = L2CAPCreditBasedConnectionResult.success

    public init() {}

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

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&destinationCID, field: "Destination CID")
        try coder.uint16(&mtu)
        try coder.uint16(&mps)
        try coder.uint16(&initialCredits)
        try coder.uint16(&result, field: "Result")
        try coder.end()
    }

    public var description: String {
        "destination=\(destinationCID) MTU=\(mtu) MPS=\(mps) credits=\(initialCredits) \(result)"
    }
}

/// L2CAP_FLOW_CONTROL_CREDIT_IND (Core 6.0, Vol 3, Part A, 4.24): the sender can receive
/// `credits` more K-frames on channel `cid` (its own, i.e. the receiver's destination).
public struct L2CAPFlowControlCreditIndication: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.flowControlCreditIndication

    public var cid: L2CAPChannelID = .null
    public var credits: UInt16 = 0

    public init() {}

    public init(cid: L2CAPChannelID, credits: UInt16) {
        self.cid = cid
        self.credits = credits
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&cid, field: "CID")
        try coder.uint16(&credits)
        try coder.end()
    }

    public var description: String { "cid=\(cid) credits=\(credits)" }
}
