import BluetoothCore
import Foundation

/// The parameters of one ATT PDU, as a value with its encoder and decoder side by side.
/// The opcode is not part of the parameters.
public protocol ATTPDUParameters: Sendable, Equatable, CustomStringConvertible {
    static var opcode: ATTOpcode { get }
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeParameters(into writer: inout ByteWriter)
}

/// ATT parameters that declare their fields once (``PacketFields``) take their decoder and
/// encoder from that declaration.
extension ATTPDUParameters where Self: PacketFields {
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeParameters(into writer: inout ByteWriter) { writeFields(to: &writer) }
}

/// An Attribute Protocol PDU (Core 6.0, Vol 3, Part F, 3.4), one case per PDU.
///
/// ``decode(_:)`` throws `PacketDecodingError/unknownOpcode(context:opcode:)` carrying the
/// opcode for an opcode this stack does not know, and another `PacketDecodingError` for a
/// known PDU of the wrong length. What a server answers to either is in
/// ``serverErrorResponse(toUndecodable:)``: Vol 3, Part F, 3.3 says an unsupported request
/// gets Request Not Supported, an invalid request gets Invalid PDU, and an unsupported
/// command (Command Flag set) is ignored.
public enum ATTPDU: Sendable, Equatable, CustomStringConvertible {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(ATTExchangeMTURequest)
    case exchangeMTUResponse(ATTExchangeMTUResponse)
    case findInformationRequest(ATTFindInformationRequest)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    case findByTypeValueResponse(ATTFindByTypeValueResponse)
    case readByTypeRequest(ATTReadByTypeRequest)
    case readByTypeResponse(ATTReadByTypeResponse)
    case readRequest(ATTReadRequest)
    case readResponse(ATTReadResponse)
    case readBlobRequest(ATTReadBlobRequest)
    case readBlobResponse(ATTReadBlobResponse)
    case readMultipleRequest(ATTReadMultipleRequest)
    case readMultipleResponse(ATTReadMultipleResponse)
    case readByGroupTypeRequest(ATTReadByGroupTypeRequest)
    case readByGroupTypeResponse(ATTReadByGroupTypeResponse)
    case readMultipleVariableRequest(ATTReadMultipleVariableRequest)
    case readMultipleVariableResponse(ATTReadMultipleVariableResponse)
    case writeRequest(ATTWriteRequest)
    case writeResponse(ATTWriteResponse)
    case writeCommand(ATTWriteCommand)
    case signedWriteCommand(ATTSignedWriteCommand)
    case prepareWriteRequest(ATTPrepareWriteRequest)
    case prepareWriteResponse(ATTPrepareWriteResponse)
    case executeWriteRequest(ATTExecuteWriteRequest)
    case executeWriteResponse(ATTExecuteWriteResponse)
    case handleValueNotification(ATTHandleValueNotification)
    case handleValueIndication(ATTHandleValueIndication)
    case handleValueConfirmation(ATTHandleValueConfirmation)
    case multipleHandleValueNotification(ATTMultipleHandleValueNotification)

    /// The ATT_MTU of an LE ATT bearer before any MTU exchange (Core 6.0, Vol 3, Part G, 5.2.1).
    public static let defaultLEMTU: UInt16 = 23

    /// The parameters of this PDU.
    public var parameters: any ATTPDUParameters {
        switch self {
        case let .errorResponse(pdu): return pdu
        case let .exchangeMTURequest(pdu): return pdu
        case let .exchangeMTUResponse(pdu): return pdu
        case let .findInformationRequest(pdu): return pdu
        case let .findInformationResponse(pdu): return pdu
        case let .findByTypeValueRequest(pdu): return pdu
        case let .findByTypeValueResponse(pdu): return pdu
        case let .readByTypeRequest(pdu): return pdu
        case let .readByTypeResponse(pdu): return pdu
        case let .readRequest(pdu): return pdu
        case let .readResponse(pdu): return pdu
        case let .readBlobRequest(pdu): return pdu
        case let .readBlobResponse(pdu): return pdu
        case let .readMultipleRequest(pdu): return pdu
        case let .readMultipleResponse(pdu): return pdu
        case let .readByGroupTypeRequest(pdu): return pdu
        case let .readByGroupTypeResponse(pdu): return pdu
        case let .readMultipleVariableRequest(pdu): return pdu
        case let .readMultipleVariableResponse(pdu): return pdu
        case let .writeRequest(pdu): return pdu
        case let .writeResponse(pdu): return pdu
        case let .writeCommand(pdu): return pdu
        case let .signedWriteCommand(pdu): return pdu
        case let .prepareWriteRequest(pdu): return pdu
        case let .prepareWriteResponse(pdu): return pdu
        case let .executeWriteRequest(pdu): return pdu
        case let .executeWriteResponse(pdu): return pdu
        case let .handleValueNotification(pdu): return pdu
        case let .handleValueIndication(pdu): return pdu
        case let .handleValueConfirmation(pdu): return pdu
        case let .multipleHandleValueNotification(pdu): return pdu
        }
    }

    public var opcode: ATTOpcode { type(of: parameters).opcode }

    /// How the PDU travels, for routing: requests and commands go to the server, the rest to
    /// the client (confirmations to the server).
    public var kind: ATTPDUKind { opcode.kind ?? .command }

    /// For a request, the opcode of the successful response; an ``ATTErrorResponse`` naming
    /// this request's opcode may come instead. `nil` for anything but a request.
    public var expectedResponseOpcode: ATTOpcode? { opcode.responseOpcode }

    /// The PDU: opcode then parameters (and, for a signed write, the signature).
    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(opcode.rawValue)
        parameters.encodeParameters(into: &writer)
        return writer.bytes
    }

    /// Decodes one ATT PDU (the payload of an L2CAP B-frame on the ATT channel).
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> ATTPDU {
        guard let first = bytes.first else { throw .truncated(context: "ATT PDU", needed: 1, available: 0) }
        let opcode = ATTOpcode(rawValue: first)
        do {
            return try decode(opcode: opcode, parameters: bytes[1...])
        } catch {
            // Name the PDU only when something went wrong: building the name costs more
            // than decoding a notification.
            if case .unknownOpcode = error { throw error }
            throw error.replacingContext(error.context.replacingOccurrences(of: "ATT PDU", with: "ATT \(opcode.name)"))
        }
    }

    private static func decode(opcode: ATTOpcode, parameters: ArraySlice<UInt8>) throws(PacketDecodingError) -> ATTPDU {
        let first = opcode.rawValue
        var reader = ByteReader(parameters, context: "ATT PDU")
        func decode<P: ATTPDUParameters>(_: P.Type) throws(PacketDecodingError) -> P {
            let parameters = try P(parameters: &reader)
            try reader.expectEnd()
            return parameters
        }
        switch opcode {
        case .errorResponse: return .errorResponse(try decode(ATTErrorResponse.self))
        case .exchangeMTURequest: return .exchangeMTURequest(try decode(ATTExchangeMTURequest.self))
        case .exchangeMTUResponse: return .exchangeMTUResponse(try decode(ATTExchangeMTUResponse.self))
        case .findInformationRequest: return .findInformationRequest(try decode(ATTFindInformationRequest.self))
        case .findInformationResponse: return .findInformationResponse(try decode(ATTFindInformationResponse.self))
        case .findByTypeValueRequest: return .findByTypeValueRequest(try decode(ATTFindByTypeValueRequest.self))
        case .findByTypeValueResponse: return .findByTypeValueResponse(try decode(ATTFindByTypeValueResponse.self))
        case .readByTypeRequest: return .readByTypeRequest(try decode(ATTReadByTypeRequest.self))
        case .readByTypeResponse: return .readByTypeResponse(try decode(ATTReadByTypeResponse.self))
        case .readRequest: return .readRequest(try decode(ATTReadRequest.self))
        case .readResponse: return .readResponse(try decode(ATTReadResponse.self))
        case .readBlobRequest: return .readBlobRequest(try decode(ATTReadBlobRequest.self))
        case .readBlobResponse: return .readBlobResponse(try decode(ATTReadBlobResponse.self))
        case .readMultipleRequest: return .readMultipleRequest(try decode(ATTReadMultipleRequest.self))
        case .readMultipleResponse: return .readMultipleResponse(try decode(ATTReadMultipleResponse.self))
        case .readByGroupTypeRequest: return .readByGroupTypeRequest(try decode(ATTReadByGroupTypeRequest.self))
        case .readByGroupTypeResponse: return .readByGroupTypeResponse(try decode(ATTReadByGroupTypeResponse.self))
        case .readMultipleVariableRequest:
            return .readMultipleVariableRequest(try decode(ATTReadMultipleVariableRequest.self))
        case .readMultipleVariableResponse:
            return .readMultipleVariableResponse(try decode(ATTReadMultipleVariableResponse.self))
        case .writeRequest: return .writeRequest(try decode(ATTWriteRequest.self))
        case .writeResponse: return .writeResponse(try decode(ATTWriteResponse.self))
        case .writeCommand: return .writeCommand(try decode(ATTWriteCommand.self))
        case .signedWriteCommand: return .signedWriteCommand(try decode(ATTSignedWriteCommand.self))
        case .prepareWriteRequest: return .prepareWriteRequest(try decode(ATTPrepareWriteRequest.self))
        case .prepareWriteResponse: return .prepareWriteResponse(try decode(ATTPrepareWriteResponse.self))
        case .executeWriteRequest: return .executeWriteRequest(try decode(ATTExecuteWriteRequest.self))
        case .executeWriteResponse: return .executeWriteResponse(try decode(ATTExecuteWriteResponse.self))
        case .handleValueNotification: return .handleValueNotification(try decode(ATTHandleValueNotification.self))
        case .handleValueIndication: return .handleValueIndication(try decode(ATTHandleValueIndication.self))
        case .handleValueConfirmation: return .handleValueConfirmation(try decode(ATTHandleValueConfirmation.self))
        case .multipleHandleValueNotification:
            return .multipleHandleValueNotification(try decode(ATTMultipleHandleValueNotification.self))
        default:
            throw .unknownOpcode(context: "ATT PDU", opcode: UInt64(first))
        }
    }

    public var description: String { "\(opcode.name) \(parameters)" }
}
