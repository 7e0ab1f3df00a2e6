import Testing
import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct ATTErrorCodeTests {
    @Test func specificationNames() {
        let expected: [UInt8: String] = [
            0x01: "Invalid Handle", 0x02: "Read Not Permitted", 0x03: "Write Not Permitted", 0x04: "Invalid PDU",
            0x05: "Insufficient Authentication", 0x06: "Request Not Supported", 0x07: "Invalid Offset",
            0x08: "Insufficient Authorization", 0x09: "Prepare Queue Full", 0x0A: "Attribute Not Found",
            0x0B: "Attribute Not Long", 0x0C: "Encryption Key Size Too Short", 0x0D: "Invalid Attribute Value Length",
            0x0E: "Unlikely Error", 0x0F: "Insufficient Encryption", 0x10: "Unsupported Group Type",
            0x11: "Insufficient Resources", 0x12: "Database Out Of Sync", 0x13: "Value Not Allowed",
            0xFC: "Write Request Rejected",
            0xFD: "Client Characteristic Configuration Descriptor Improperly Configured",
            0xFE: "Procedure Already in Progress", 0xFF: "Out of Range",
        ]
        for (raw, name) in expected { #expect(ATTErrorCode(rawValue: raw).name == name) }
        #expect(ATTErrorCode.cccdImproperlyConfigured.rawValue == 0xFD)
        #expect(ATTErrorCode.procedureAlreadyInProgress.rawValue == 0xFE)
        #expect(ATTErrorCode.outOfRange.rawValue == 0xFF)
        #expect(ATTErrorCode.readNotPermitted.description == "Read Not Permitted (0x02)")
    }

    @Test func rangesAndReservedValues() {
        #expect(ATTErrorCode(rawValue: 0x80).name == "Application Error")
        #expect(ATTErrorCode(rawValue: 0x9F).isApplicationError)
        #expect(!ATTErrorCode(rawValue: 0xA0).isApplicationError)
        #expect(ATTErrorCode(rawValue: 0xA0).name == "Reserved Error")
        #expect(ATTErrorCode(rawValue: 0xE0).isCommonProfileError)
        #expect(ATTErrorCode.application(0x85) == ATTErrorCode(rawValue: 0x85))
        #expect(ATTErrorCode.application(0x13) == nil)
    }

    @Test func errorDescriptionNamesCodeRequestAndHandle() {
        let error = ATTError(requestOpcode: .readRequest, handle: 0x0012, code: .readNotPermitted)
        #expect(error.description == "Read Not Permitted (0x02) for Read Request on handle 0x0012")
        let response = ATTErrorResponse(requestOpcode: .writeRequest, handle: 0x002A, code: .cccdImproperlyConfigured)
        #expect(response.error.description
            == "Client Characteristic Configuration Descriptor Improperly Configured (0xFD) for Write Request on handle 0x002A")
    }
}
