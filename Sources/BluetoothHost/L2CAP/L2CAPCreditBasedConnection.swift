import BluetoothCore

extension FieldCoder {
    /// A list of 2-octet CIDs filling the rest of the command.
    fileprivate mutating func channelIDs(_ cids: inout [L2CAPChannelID]) throws(PacketDecodingError) {
        try check(remainingCount % 2 == 0, field: "CID list length", value: remainingCount)
        try list(&cids, blank: .null) { coder, cid throws(PacketDecodingError) in try coder.uint16(&cid, field: "CID") }
    }
}

/// L2CAP_CREDIT_BASED_CONNECTION_REQ (Core 6.0, Vol 3, Part A, 4.25): open up to five
/// enhanced credit-based channels at once.
///
/// The decoder accepts any number of CIDs so that the host can answer a bad count with
/// ``L2CAPCreditBasedConnectionResult/invalidParameters`` rather than Command Reject.
public struct L2CAPCreditBasedConnectionRequest: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.creditBasedConnectionRequest
    /// At most five channels per request (Vol 3, Part A, 4.25).
    public static let maximumChannels = 5

    public var spsm: UInt16 = 0
    /// At least 64 for enhanced credit-based channels.
    public var mtu: UInt16 = 0
    public var mps: UInt16 = 0
    public var initialCredits: UInt16 = 0
    public var sourceCIDs: [L2CAPChannelID] = []

    public init() {}

    public init(spsm: UInt16, mtu: UInt16, mps: UInt16, initialCredits: UInt16, sourceCIDs: [L2CAPChannelID]) {
        self.spsm = spsm
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.sourceCIDs = sourceCIDs
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&spsm)
        try coder.uint16(&mtu)
        try coder.uint16(&mps)
        try coder.uint16(&initialCredits)
        try coder.channelIDs(&sourceCIDs)
    }

    public var description: String {
        "SPSM=\(Hex.format(spsm, digits: 4)) MTU=\(mtu) MPS=\(mps) credits=\(initialCredits) sources=\(sourceCIDs)"
    }
}

/// L2CAP_CREDIT_BASED_CONNECTION_RSP (Core 6.0, Vol 3, Part A, 4.26): one destination CID
/// per requested channel, 0x0000 for each channel refused.
public struct L2CAPCreditBasedConnectionResponse: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.creditBasedConnectionResponse

    public var mtu: UInt16 = 0
    public var mps: UInt16 = 0
    public var initialCredits: UInt16 = 0
    public var result = L2CAPCreditBasedConnectionResult.success
    public var destinationCIDs: [L2CAPChannelID] = []

    public init() {}

    public init(mtu: UInt16, mps: UInt16, initialCredits: UInt16, result: L2CAPCreditBasedConnectionResult,
                destinationCIDs: [L2CAPChannelID]) {
        self.mtu = mtu
        self.mps = mps
        self.initialCredits = initialCredits
        self.result = result
        self.destinationCIDs = destinationCIDs
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&mtu)
        try coder.uint16(&mps)
        try coder.uint16(&initialCredits)
        try coder.uint16(&result, field: "Result")
        try coder.channelIDs(&destinationCIDs)
    }

    public var description: String {
        "MTU=\(mtu) MPS=\(mps) credits=\(initialCredits) \(result) destinations=\(destinationCIDs)"
    }
}

extension L2CAPCreditBasedConnectionResponse {
    /// The smallest MTU and MPS of enhanced credit-based channels (Core 6.0, Vol 3, Part A, 4.25, 4.26).
    public static let minimumMTU: UInt16 = 64

    /// Why this response cannot answer `request`, or `nil` (Core 6.0, Vol 3, Part A, 4.26):
    /// more destination CIDs than source CIDs asked for, a destination CID neither 0x0000 (that
    /// channel refused) nor a dynamic LE CID, the same CID for two channels, or, once any
    /// channel is accepted, an MTU below 64 or an MPS outside 64…65533. Credits may be any
    /// value (0…65535).
    public func violation(answering request: L2CAPCreditBasedConnectionRequest) -> String? {
        if destinationCIDs.count > request.sourceCIDs.count {
            return "\(destinationCIDs.count) destination CIDs for \(request.sourceCIDs.count) channels requested"
        }
        let accepted = destinationCIDs.filter { $0 != .null }
        if let invalid = accepted.first(where: { !$0.isLEDynamic }) { return "destination CID \(invalid) is not a dynamic LE CID" }
        if Set(accepted).count != accepted.count { return "a destination CID names two channels: \(destinationCIDs)" }
        guard !accepted.isEmpty else { return nil }
        if mtu < Self.minimumMTU { return "MTU \(mtu) is below 64" }
        if mps < Self.minimumMTU || mps > L2CAPChannelParameters.maximumMPS { return "MPS \(mps) is outside 64…65533" }
        return nil
    }
}

/// L2CAP_CREDIT_BASED_RECONFIGURE_REQ (Core 6.0, Vol 3, Part A, 4.27): new MTU and MPS for
/// one or more enhanced credit-based channels (identified by the sender's CIDs).
public struct L2CAPCreditBasedReconfigureRequest: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.creditBasedReconfigureRequest

    public var mtu: UInt16 = 0
    public var mps: UInt16 = 0
    public var destinationCIDs: [L2CAPChannelID] = []

    public init() {}

    public init(mtu: UInt16, mps: UInt16, destinationCIDs: [L2CAPChannelID]) {
        self.mtu = mtu
        self.mps = mps
        self.destinationCIDs = destinationCIDs
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&mtu)
        try coder.uint16(&mps)
        try coder.channelIDs(&destinationCIDs)
    }

    public var description: String { "MTU=\(mtu) MPS=\(mps) destinations=\(destinationCIDs)" }
}

/// L2CAP_CREDIT_BASED_RECONFIGURE_RSP (Core 6.0, Vol 3, Part A, 4.28).
public struct L2CAPCreditBasedReconfigureResponse: LESignalingCommandData, CustomStringConvertible, PacketFields {
    public static let code = LESignalingCode.creditBasedReconfigureResponse

    public var result = L2CAPCreditBasedReconfigureResult.success

    public init() {}

    public init(result: L2CAPCreditBasedReconfigureResult) { self.result = result }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint16(&result, field: "Result")
        try coder.end()
    }

    public var description: String { "\(result)" }
}
