import BluetoothCore
import Testing
import BluetoothHost

private func expectRoundTrip(_ pdu: ATTPDU, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(pdu.encode() == bytes, sourceLocation: sourceLocation)
    #expect(try ATTPDU.decode(bytes) == pdu, sourceLocation: sourceLocation)
}

@Suite(.timeLimit(.minutes(1))) struct ATTPDUReadWriteTests {
    @Test func read() throws {
        try expectRoundTrip(.readRequest(.init(handle: 0x0003)), [0x0A, 0x03, 0x00])
        try expectRoundTrip(.readResponse(.init(value: [0x48, 0x69])), [0x0B, 0x48, 0x69])
        try expectRoundTrip(.readResponse(.init(value: [])), [0x0B])
        try expectRoundTrip(.readBlobRequest(.init(handle: 0x0003, offset: 22)), [0x0C, 0x03, 0x00, 0x16, 0x00])
        try expectRoundTrip(.readBlobResponse(.init(partValue: [1, 2, 3])), [0x0D, 0x01, 0x02, 0x03])
        #expect(ATTPDU.readBlobRequest(.init(handle: 3, offset: 0)).expectedResponseOpcode == .readBlobResponse)
    }

    @Test func readMultiple() throws {
        try expectRoundTrip(.readMultipleRequest(.init(handles: [3, 5])), [0x0E, 0x03, 0x00, 0x05, 0x00])
        try expectRoundTrip(.readMultipleResponse(.init(setOfValues: [1, 2, 3])), [0x0F, 0x01, 0x02, 0x03])
        try expectRoundTrip(.readMultipleVariableRequest(.init(handles: [3, 5, 7])),
                            [0x20, 0x03, 0x00, 0x05, 0x00, 0x07, 0x00])
        // Tuples: length 2 [AA BB], length 0, length 3 [01 02 03].
        try expectRoundTrip(.readMultipleVariableResponse(.init(values: [.init(value: [0xAA, 0xBB]), .init(value: []),
                                                                         .init(value: [1, 2, 3])])),
                            [0x21, 0x02, 0x00, 0xAA, 0xBB, 0x00, 0x00, 0x03, 0x00, 0x01, 0x02, 0x03])
    }

    @Test func readMultipleVariableResponseMayEndInsideAValue() throws {
        // The second tuple announces 5 octets but the PDU ends after 2 (Vol 3, Part F, 3.4.4.12).
        let bytes: [UInt8] = [0x21, 0x02, 0x00, 0xAA, 0xBB, 0x05, 0x00, 0x01, 0x02]
        guard case let .readMultipleVariableResponse(response) = try ATTPDU.decode(bytes) else {
            Issue.record("wrong PDU")
            return
        }
        #expect(response.values == [.init(valueLength: 2, value: [0xAA, 0xBB]), .init(valueLength: 5, value: [1, 2])])
        #expect(response.values.map(\.isTruncated) == [false, true])
        #expect(ATTPDU.readMultipleVariableResponse(response).encode() == bytes)
    }

    @Test func writes() throws {
        try expectRoundTrip(.writeRequest(.init(handle: 0x0003, value: [0x01, 0x00])), [0x12, 0x03, 0x00, 0x01, 0x00])
        try expectRoundTrip(.writeResponse(.init()), [0x13])
        try expectRoundTrip(.writeCommand(.init(handle: 0x0003, value: [0xFF])), [0x52, 0x03, 0x00, 0xFF])
        #expect(ATTPDU.writeCommand(.init(handle: 3, value: [])).kind == .command)
        #expect(ATTPDU.writeRequest(.init(handle: 3, value: [])).expectedResponseOpcode == .writeResponse)
    }

    @Test func signedWriteCommandFromTheSpecification() throws {
        // Core 6.0, Vol 3, Part F, 3.4.5.4: the signed message 'D21200133701000000F1871E933C900FF2':
        // opcode, handle 0x0012, value 13 37, SignCounter 1, MAC 0xF20F903C931E87F1.
        let bytes: [UInt8] = [0xD2, 0x12, 0x00, 0x13, 0x37, 0x01, 0x00, 0x00, 0x00,
                              0xF1, 0x87, 0x1E, 0x93, 0x3C, 0x90, 0x0F, 0xF2]
        let command = ATTSignedWriteCommand(handle: 0x0012, value: [0x13, 0x37], signCounter: 1, mac: 0xF20F_903C_931E_87F1)
        try expectRoundTrip(.signedWriteCommand(command), bytes)
        #expect(command.authenticationSignature == [0x01, 0x00, 0x00, 0x00, 0xF1, 0x87, 0x1E, 0x93, 0x3C, 0x90, 0x0F, 0xF2])
        #expect(ATTPDU.signedWriteCommand(command).kind == .command)
    }

    @Test func queuedWrites() throws {
        let request = ATTPrepareWriteRequest(handle: 0x0003, offset: 0, partValue: [0x41, 0x42])
        try expectRoundTrip(.prepareWriteRequest(request), [0x16, 0x03, 0x00, 0x00, 0x00, 0x41, 0x42])
        try expectRoundTrip(.prepareWriteResponse(.init(echoing: request)), [0x17, 0x03, 0x00, 0x00, 0x00, 0x41, 0x42])
        try expectRoundTrip(.prepareWriteRequest(.init(handle: 0x0103, offset: 0x0116, partValue: [])),
                            [0x16, 0x03, 0x01, 0x16, 0x01])
        try expectRoundTrip(.executeWriteRequest(.init(flags: .write)), [0x18, 0x01])
        try expectRoundTrip(.executeWriteRequest(.init(flags: .cancel)), [0x18, 0x00])
        try expectRoundTrip(.executeWriteResponse(.init()), [0x19])
    }
}
