import BluetoothCore
import Testing
import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct ATTPDUMalformedTests {
    @Test func emptyPDU() {
        #expect(throws: PacketDecodingError.truncated(context: "ATT PDU", needed: 1, available: 0)) { try ATTPDU.decode([]) }
        #expect(ATTPDU.serverErrorResponse(toUndecodable: []) == nil)
    }

    @Test func unknownOpcodeCarriesTheOpcode() {
        #expect(throws: PacketDecodingError.unknownOpcode(context: "ATT PDU", opcode: 0x30)) {
            try ATTPDU.decode([0x30, 0x01, 0x00])
        }
        #expect(throws: PacketDecodingError.unknownOpcode(context: "ATT PDU", opcode: 0x70)) { try ATTPDU.decode([0x70]) }
    }

    @Test func serverAnswersUnknownRequestsAndIgnoresUnknownCommands() {
        // Vol 3, Part F, 3.3: Request Not Supported, handle 0x0000, for an unsupported request.
        let reply = ATTPDU.serverErrorResponse(toUndecodable: [0x30, 0x01, 0x00])
        #expect(reply == ATTErrorResponse(requestOpcode: ATTOpcode(rawValue: 0x30), handle: 0, code: .requestNotSupported))
        #expect(reply.map { ATTPDU.errorResponse($0).encode() } == [0x01, 0x30, 0x00, 0x00, 0x06])
        // Command Flag set: ignored.
        #expect(ATTPDU.serverErrorResponse(toUndecodable: [0x70, 0x01]) == nil)
        // Invalid PDU for a known request of the wrong length.
        #expect(ATTPDU.serverErrorResponse(toUndecodable: [0x0A, 0x03])
            == ATTErrorResponse(requestOpcode: .readRequest, handle: 0, code: .invalidPDU))
        // A malformed command, notification or confirmation is not answered.
        #expect(ATTPDU.serverErrorResponse(toUndecodable: [0x52, 0x03]) == nil)
        #expect(ATTPDU.serverErrorResponse(toUndecodable: [0x1B]) == nil)
        #expect(ATTPDU.serverErrorResponse(toUndecodable: [0x1E, 0x00]) == nil)
    }

    @Test func shortPDUs() {
        #expect(throws: PacketDecodingError.truncated(context: "ATT Read Request", needed: 2, available: 1)) {
            try ATTPDU.decode([0x0A, 0x03])
        }
        #expect(throws: PacketDecodingError.truncated(context: "ATT Error Response", needed: 1, available: 0)) {
            try ATTPDU.decode([0x01, 0x0A, 0x12, 0x00])
        }
        #expect(throws: PacketDecodingError.truncated(context: "ATT Handle Value Notification", needed: 2, available: 1)) {
            try ATTPDU.decode([0x1B, 0x03])
        }
        // Signed Write Command without the full 12-octet signature.
        #expect(throws: PacketDecodingError.truncated(context: "ATT Signed Write Command", needed: 12, available: 11)) {
            try ATTPDU.decode([0xD2, 0x12, 0x00] + Array(repeating: 0, count: 11))
        }
    }

    @Test func trailingBytesOnFixedSizePDUs() {
        #expect(throws: PacketDecodingError.trailingBytes(context: "ATT Read Request", count: 1)) {
            try ATTPDU.decode([0x0A, 0x03, 0x00, 0x00])
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "ATT Exchange MTU Request", count: 2)) {
            try ATTPDU.decode([0x02, 0xF7, 0x00, 0x00, 0x00])
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "ATT Write Response", count: 1)) {
            try ATTPDU.decode([0x13, 0x00])
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "ATT Handle Value Confirmation", count: 1)) {
            try ATTPDU.decode([0x1E, 0x00])
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "ATT Execute Write Request", count: 1)) {
            try ATTPDU.decode([0x18, 0x01, 0x01])
        }
    }

    @Test func readByTypeResponseLengthMustDivideTheList() {
        // Length 7 but 10 octets of attribute data.
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Type Response (entries of 7 octets)",
                                                         field: "Attribute Data List length", value: 10)) {
            try ATTPDU.decode([0x09, 0x07] + Array(repeating: 0, count: 10))
        }
        // A length below the 2-octet handle.
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Type Response", field: "length", value: 1)) {
            try ATTPDU.decode([0x09, 0x01, 0x00, 0x00])
        }
        // No entries at all.
        #expect(throws: PacketDecodingError.truncated(context: "ATT Read By Type Response", needed: 7, available: 0)) {
            try ATTPDU.decode([0x09, 0x07])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Group Type Response (entries of 6 octets)",
                                                         field: "Attribute Data List length", value: 8)) {
            try ATTPDU.decode([0x11, 0x06] + Array(repeating: 0, count: 8))
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Group Type Response", field: "length", value: 3)) {
            try ATTPDU.decode([0x11, 0x03, 0x01, 0x00, 0x02])
        }
    }

    @Test func findInformationFormatAndListChecks() {
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Find Information Response", field: "format", value: 3)) {
            try ATTPDU.decode([0x05, 0x03, 0x01, 0x00, 0x00, 0x28])
        }
        // Format 0x01 entries are 4 octets; 6 do not divide.
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Find Information Response (entries of 4 octets)",
                                                         field: "Information Data length", value: 6)) {
            try ATTPDU.decode([0x05, 0x01, 0x01, 0x00, 0x00, 0x28, 0x02, 0x00])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Find By Type Value Response (entries of 4 octets)",
                                                         field: "Handles Information List length", value: 3)) {
            try ATTPDU.decode([0x07, 0x01, 0x00, 0x05])
        }
    }

    @Test func uuidsOfThreeOctetsAreRejected() {
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Type Request", field: "attribute type length",
                                                         value: 3)) {
            try ATTPDU.decode([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28, 0x00])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read By Group Type Request",
                                                         field: "attribute group type length", value: 4)) {
            try ATTPDU.decode([0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28, 0x00, 0x00])
        }
    }

    @Test func handleSetsAndTupleLists() {
        // Read Multiple needs two or more handles.
        #expect(throws: PacketDecodingError.truncated(context: "ATT Read Multiple Request", needed: 4, available: 2)) {
            try ATTPDU.decode([0x0E, 0x03, 0x00])
        }
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Read Multiple Variable Request",
                                                         field: "Set Of Handles length", value: 5)) {
            try ATTPDU.decode([0x20, 0x03, 0x00, 0x05, 0x00, 0x07])
        }
        // A tuple announcing 2 octets where only 1 follows.
        #expect(throws: PacketDecodingError.truncated(context: "ATT Multiple Handle Value Notification", needed: 2,
                                                      available: 1)) {
            try ATTPDU.decode([0x23, 0x03, 0x00, 0x01, 0x00, 0x64, 0x05, 0x00, 0x02, 0x00, 0x01])
        }
        // A Value Length field cut in half.
        #expect(throws: PacketDecodingError.truncated(context: "ATT Read Multiple Variable Response", needed: 2,
                                                      available: 1)) {
            try ATTPDU.decode([0x21, 0x02, 0x00, 0xAA, 0xBB, 0x05])
        }
    }

    @Test func reservedExecuteWriteFlags() {
        #expect(throws: PacketDecodingError.invalidValue(context: "ATT Execute Write Request", field: "flags", value: 2)) {
            try ATTPDU.decode([0x18, 0x02])
        }
    }
}
