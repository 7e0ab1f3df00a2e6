import BluetoothCore

/// The data of one LE signalling command, with its decoder and encoder side by side.
public protocol LESignalingCommandData: Sendable, Equatable {
    static var code: LESignalingCode { get }
    init(data reader: inout ByteReader) throws(PacketDecodingError)
    func encodeData(into writer: inout ByteWriter)
}

/// Command data that declares its fields once (``PacketFields``) takes its decoder and encoder
/// from that declaration.
extension LESignalingCommandData where Self: PacketFields {
    public init(data reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeData(into writer: inout ByteWriter) { writeFields(to: &writer) }
}

/// A typed LE signalling command (Core 6.0, Vol 3, Part A, 4).
///
/// Every command valid on the LE signalling channel is decoded, so the host can answer
/// requests it does not support with the right "refused" result. Codes this stack does not
/// know, and BR/EDR-only codes, decode to ``unknown(code:data:)``: the host answers those
/// with Command Reject, reason "Command not understood" (Vol 3, Part A, 4.1), never a crash.
public enum LESignalingCommand: Sendable, Equatable, CustomStringConvertible {
    case commandReject(L2CAPCommandRejectReason)
    case disconnectionRequest(L2CAPDisconnectionRequest)
    case disconnectionResponse(L2CAPDisconnectionResponse)
    case connectionParameterUpdateRequest(L2CAPConnectionParameterUpdateRequest)
    case connectionParameterUpdateResponse(L2CAPConnectionParameterUpdateResponse)
    case leCreditBasedConnectionRequest(L2CAPLECreditBasedConnectionRequest)
    case leCreditBasedConnectionResponse(L2CAPLECreditBasedConnectionResponse)
    case flowControlCreditIndication(L2CAPFlowControlCreditIndication)
    case creditBasedConnectionRequest(L2CAPCreditBasedConnectionRequest)
    case creditBasedConnectionResponse(L2CAPCreditBasedConnectionResponse)
    case creditBasedReconfigureRequest(L2CAPCreditBasedReconfigureRequest)
    case creditBasedReconfigureResponse(L2CAPCreditBasedReconfigureResponse)
    /// A code this stack does not decode on the LE signalling channel.
    case unknown(code: UInt8, data: [UInt8])

    /// Decodes the data of a command. Throws only for a known code whose data is malformed.
    public init(code: LESignalingCode, data: [UInt8]) throws(PacketDecodingError) {
        var reader = ByteReader(data, context: "LE signaling \(code.name)")
        func decode<C: LESignalingCommandData>(_: C.Type) throws(PacketDecodingError) -> C {
            let command = try C(data: &reader)
            try reader.expectEnd()
            return command
        }
        switch code {
        case .commandReject: self = .commandReject(try decode(L2CAPCommandRejectReason.self))
        case .disconnectionRequest: self = .disconnectionRequest(try decode(L2CAPDisconnectionRequest.self))
        case .disconnectionResponse: self = .disconnectionResponse(try decode(L2CAPDisconnectionResponse.self))
        case .connectionParameterUpdateRequest:
            self = .connectionParameterUpdateRequest(try decode(L2CAPConnectionParameterUpdateRequest.self))
        case .connectionParameterUpdateResponse:
            self = .connectionParameterUpdateResponse(try decode(L2CAPConnectionParameterUpdateResponse.self))
        case .leCreditBasedConnectionRequest:
            self = .leCreditBasedConnectionRequest(try decode(L2CAPLECreditBasedConnectionRequest.self))
        case .leCreditBasedConnectionResponse:
            self = .leCreditBasedConnectionResponse(try decode(L2CAPLECreditBasedConnectionResponse.self))
        case .flowControlCreditIndication:
            self = .flowControlCreditIndication(try decode(L2CAPFlowControlCreditIndication.self))
        case .creditBasedConnectionRequest:
            self = .creditBasedConnectionRequest(try decode(L2CAPCreditBasedConnectionRequest.self))
        case .creditBasedConnectionResponse:
            self = .creditBasedConnectionResponse(try decode(L2CAPCreditBasedConnectionResponse.self))
        case .creditBasedReconfigureRequest:
            self = .creditBasedReconfigureRequest(try decode(L2CAPCreditBasedReconfigureRequest.self))
        case .creditBasedReconfigureResponse:
            self = .creditBasedReconfigureResponse(try decode(L2CAPCreditBasedReconfigureResponse.self))
        default:
            self = .unknown(code: code.rawValue, data: data)
        }
    }

    /// The typed data this command carries, or `nil` for ``unknown(code:data:)``.
    private var payload: (any LESignalingCommandData)? {
        switch self {
        case let .commandReject(command): return command
        case let .disconnectionRequest(command): return command
        case let .disconnectionResponse(command): return command
        case let .connectionParameterUpdateRequest(command): return command
        case let .connectionParameterUpdateResponse(command): return command
        case let .leCreditBasedConnectionRequest(command): return command
        case let .leCreditBasedConnectionResponse(command): return command
        case let .flowControlCreditIndication(command): return command
        case let .creditBasedConnectionRequest(command): return command
        case let .creditBasedConnectionResponse(command): return command
        case let .creditBasedReconfigureRequest(command): return command
        case let .creditBasedReconfigureResponse(command): return command
        case .unknown: return nil
        }
    }

    public var code: LESignalingCode {
        if case let .unknown(code, _) = self { return LESignalingCode(rawValue: code) }
        guard let payload else { return LESignalingCode(rawValue: 0) }
        return type(of: payload).code
    }

    /// The command's data field, without the 4-octet command header.
    public func encodeData() -> [UInt8] {
        if case let .unknown(_, data) = self { return data }
        var writer = ByteWriter()
        payload?.encodeData(into: &writer)
        return writer.bytes
    }

    public var description: String {
        switch self {
        case let .unknown(code, data): return "\(LESignalingCode(rawValue: code)) [\(Hex.encode(data, separator: " "))]"
        default: return "\(code.name) \(payload.map { "\($0)" } ?? "")"
        }
    }
}

extension LESignalingCode {
    /// Whether the code is a known response. The host must not answer a response with Command
    /// Reject (Core 6.0, Vol 3, Part A, 4.1: "If only responses are recognized, the packet shall
    /// be silently discarded").
    public var isResponse: Bool {
        [0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x13, 0x15, 0x18, 0x1A].contains(rawValue)
    }
}
