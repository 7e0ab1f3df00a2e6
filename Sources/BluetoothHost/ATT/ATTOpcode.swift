import BluetoothCore
/// How an ATT PDU travels (Core 6.0, Vol 3, Part F, 3.3, Table 3.1).
public enum ATTPDUKind: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    /// Client to server; the server answers with a response or an Error Response.
    case request
    /// Server to client, answering a request.
    case response
    /// Client to server; no answer, ever (not even an Error Response).
    case command
    /// Server to client; no answer.
    case notification
    /// Server to client; the client answers with a confirmation.
    case indication
    /// Client to server, answering an indication.
    case confirmation

    public var description: String { rawValue }
}

/// An Attribute Opcode (Core 6.0, Vol 3, Part F, 3.3.1 and 3.4.8).
///
/// Bit 7 is the Authentication Signature Flag, bit 6 the Command Flag and bits 5…0 the
/// Method. Kept as a raw value so an unknown opcode can still be classified: a server
/// ignores an unknown opcode whose Command Flag is set and answers any other with
/// Request Not Supported (Vol 3, Part F, 3.3).
public struct ATTOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    public static let readMultipleRequest = ATTOpcode(rawValue: 0x0E)
    public static let readMultipleResponse = ATTOpcode(rawValue: 0x0F)
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    public static let prepareWriteRequest = ATTOpcode(rawValue: 0x16)
    public static let prepareWriteResponse = ATTOpcode(rawValue: 0x17)
    public static let executeWriteRequest = ATTOpcode(rawValue: 0x18)
    public static let executeWriteResponse = ATTOpcode(rawValue: 0x19)
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    public static let readMultipleVariableRequest = ATTOpcode(rawValue: 0x20)
    public static let readMultipleVariableResponse = ATTOpcode(rawValue: 0x21)
    public static let multipleHandleValueNotification = ATTOpcode(rawValue: 0x23)
    public static let writeCommand = ATTOpcode(rawValue: 0x52)
    public static let signedWriteCommand = ATTOpcode(rawValue: 0xD2)

    /// Bits 5…0.
    public var method: UInt8 { rawValue & 0x3F }
    /// Bit 6: the PDU is a command and never gets a response (Vol 3, Part F, 3.3.1).
    public var isCommand: Bool { rawValue & 0x40 != 0 }
    /// Bit 7: a 12-octet authentication signature ends the PDU (Vol 3, Part F, 3.3.1).
    public var hasAuthenticationSignature: Bool { rawValue & 0x80 != 0 }

    /// Whether the specification defines this opcode (Vol 3, Part F, Table 3.43).
    public var isKnown: Bool { Self.table[rawValue] != nil }

    /// The kind of a known opcode; for an unknown one, ``ATTPDUKind/command`` if the Command
    /// Flag is set, else `nil`.
    public var kind: ATTPDUKind? {
        Self.table[rawValue]?.kind ?? (isCommand ? .command : nil)
    }

    /// For a request, the opcode of the successful response (Vol 3, Part F, 3.4.9); an Error
    /// Response may come instead. `nil` for anything that is not a known request.
    public var responseOpcode: ATTOpcode? {
        kind == .request && isKnown ? ATTOpcode(rawValue: rawValue + 1) : nil
    }

    /// "Read Request", "Handle Value Notification", …; "Unknown" for an undefined opcode.
    public var name: String { Self.table[rawValue]?.name ?? "Unknown" }

    /// The PDU name in the specification's notation, e.g. `ATT_READ_REQ`.
    public var specificationName: String? { Self.table[rawValue]?.specificationName }

    public var description: String { "\(name) (\(Hex.format(rawValue, digits: 2)))" }

    private struct Entry: Sendable {
        let name: String
        let specificationName: String
        let kind: ATTPDUKind
    }

    private static let table: [UInt8: Entry] = [
        0x01: Entry(name: "Error Response", specificationName: "ATT_ERROR_RSP", kind: .response),
        0x02: Entry(name: "Exchange MTU Request", specificationName: "ATT_EXCHANGE_MTU_REQ", kind: .request),
        0x03: Entry(name: "Exchange MTU Response", specificationName: "ATT_EXCHANGE_MTU_RSP", kind: .response),
        0x04: Entry(name: "Find Information Request", specificationName: "ATT_FIND_INFORMATION_REQ", kind: .request),
        0x05: Entry(name: "Find Information Response", specificationName: "ATT_FIND_INFORMATION_RSP", kind: .response),
        0x06: Entry(name: "Find By Type Value Request", specificationName: "ATT_FIND_BY_TYPE_VALUE_REQ", kind: .request),
        0x07: Entry(name: "Find By Type Value Response", specificationName: "ATT_FIND_BY_TYPE_VALUE_RSP", kind: .response),
        0x08: Entry(name: "Read By Type Request", specificationName: "ATT_READ_BY_TYPE_REQ", kind: .request),
        0x09: Entry(name: "Read By Type Response", specificationName: "ATT_READ_BY_TYPE_RSP", kind: .response),
        0x0A: Entry(name: "Read Request", specificationName: "ATT_READ_REQ", kind: .request),
        0x0B: Entry(name: "Read Response", specificationName: "ATT_READ_RSP", kind: .response),
        0x0C: Entry(name: "Read Blob Request", specificationName: "ATT_READ_BLOB_REQ", kind: .request),
        0x0D: Entry(name: "Read Blob Response", specificationName: "ATT_READ_BLOB_RSP", kind: .response),
        0x0E: Entry(name: "Read Multiple Request", specificationName: "ATT_READ_MULTIPLE_REQ", kind: .request),
        0x0F: Entry(name: "Read Multiple Response", specificationName: "ATT_READ_MULTIPLE_RSP", kind: .response),
        0x10: Entry(name: "Read By Group Type Request", specificationName: "ATT_READ_BY_GROUP_TYPE_REQ", kind: .request),
        0x11: Entry(name: "Read By Group Type Response", specificationName: "ATT_READ_BY_GROUP_TYPE_RSP", kind: .response),
        0x12: Entry(name: "Write Request", specificationName: "ATT_WRITE_REQ", kind: .request),
        0x13: Entry(name: "Write Response", specificationName: "ATT_WRITE_RSP", kind: .response),
        0x16: Entry(name: "Prepare Write Request", specificationName: "ATT_PREPARE_WRITE_REQ", kind: .request),
        0x17: Entry(name: "Prepare Write Response", specificationName: "ATT_PREPARE_WRITE_RSP", kind: .response),
        0x18: Entry(name: "Execute Write Request", specificationName: "ATT_EXECUTE_WRITE_REQ", kind: .request),
        0x19: Entry(name: "Execute Write Response", specificationName: "ATT_EXECUTE_WRITE_RSP", kind: .response),
        0x1B: Entry(name: "Handle Value Notification", specificationName: "ATT_HANDLE_VALUE_NTF", kind: .notification),
        0x1D: Entry(name: "Handle Value Indication", specificationName: "ATT_HANDLE_VALUE_IND", kind: .indication),
        0x1E: Entry(name: "Handle Value Confirmation", specificationName: "ATT_HANDLE_VALUE_CFM", kind: .confirmation),
        0x20: Entry(name: "Read Multiple Variable Request", specificationName: "ATT_READ_MULTIPLE_VARIABLE_REQ", kind: .request),
        0x21: Entry(name: "Read Multiple Variable Response", specificationName: "ATT_READ_MULTIPLE_VARIABLE_RSP", kind: .response),
        0x23: Entry(name: "Multiple Handle Value Notification", specificationName: "ATT_MULTIPLE_HANDLE_VALUE_NTF",
                    kind: .notification),
        0x52: Entry(name: "Write Command", specificationName: "ATT_WRITE_CMD", kind: .command),
        0xD2: Entry(name: "Signed Write Command", specificationName: "ATT_SIGNED_WRITE_CMD", kind: .command),
    ]
}
