import Testing
import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct ATTOpcodeTests {
    @Test func flagBits() {
        #expect(ATTOpcode.writeCommand.isCommand)
        #expect(!ATTOpcode.writeCommand.hasAuthenticationSignature)
        #expect(ATTOpcode.writeCommand.method == ATTOpcode.writeRequest.method)
        #expect(ATTOpcode.signedWriteCommand.isCommand)
        #expect(ATTOpcode.signedWriteCommand.hasAuthenticationSignature)
        #expect(!ATTOpcode.writeRequest.isCommand)
    }

    @Test func kindsOfKnownOpcodes() {
        #expect(ATTOpcode.readRequest.kind == .request)
        #expect(ATTOpcode.errorResponse.kind == .response)
        #expect(ATTOpcode.writeCommand.kind == .command)
        #expect(ATTOpcode.signedWriteCommand.kind == .command)
        #expect(ATTOpcode.handleValueNotification.kind == .notification)
        #expect(ATTOpcode.multipleHandleValueNotification.kind == .notification)
        #expect(ATTOpcode.handleValueIndication.kind == .indication)
        #expect(ATTOpcode.handleValueConfirmation.kind == .confirmation)
    }

    @Test func everyRequestHasAKnownResponse() {
        let known = (0...255).map { ATTOpcode(rawValue: UInt8($0)) }.filter(\.isKnown)
        #expect(known.count == 31)
        let requests = known.filter { $0.kind == .request }
        #expect(requests.count == 12)
        for request in requests {
            let response = request.responseOpcode
            #expect(response?.kind == .response, "\(request)")
            #expect(response?.isKnown == true, "\(request)")
        }
        #expect(ATTOpcode.readMultipleVariableRequest.responseOpcode == .readMultipleVariableResponse)
        #expect(ATTOpcode.executeWriteRequest.responseOpcode == .executeWriteResponse)
        #expect(ATTOpcode.handleValueIndication.responseOpcode == nil)
        #expect(ATTOpcode.writeCommand.responseOpcode == nil)
    }

    @Test func unknownOpcodesAreClassifiedByTheCommandFlag() {
        let unknownRequest = ATTOpcode(rawValue: 0x30)
        #expect(!unknownRequest.isKnown)
        #expect(unknownRequest.kind == nil)
        #expect(unknownRequest.name == "Unknown")
        let unknownCommand = ATTOpcode(rawValue: 0x70)
        #expect(unknownCommand.kind == .command)
    }

    @Test func names() {
        #expect(ATTOpcode.readRequest.name == "Read Request")
        #expect(ATTOpcode.readRequest.specificationName == "ATT_READ_REQ")
        #expect(ATTOpcode.multipleHandleValueNotification.specificationName == "ATT_MULTIPLE_HANDLE_VALUE_NTF")
        #expect(ATTOpcode.signedWriteCommand.description == "Signed Write Command (0xD2)")
    }
}
