import BluetoothCore
import Testing
import BluetoothHost

/// Decodes `bytes` as a signalling packet, checks identifier and typed command, and checks
/// that encoding the command gives the same bytes back.
private func expectRoundTrip(_ bytes: [UInt8], identifier: UInt8, _ command: LESignalingCommand,
                             sourceLocation: SourceLocation = #_sourceLocation) throws {
    let packet = try LESignalingPacket.decode(bytes)
    #expect(packet.identifier == identifier, sourceLocation: sourceLocation)
    #expect(try packet.command == command, sourceLocation: sourceLocation)
    #expect(LESignalingPacket(identifier: identifier, command: command).encode() == bytes, sourceLocation: sourceLocation)
}

@Suite(.timeLimit(.minutes(1))) struct LESignalingCommandTests {
    @Test func commandRejectReasons() throws {
        // Code 0x01, id, length, reason 0x0000 and no reason data.
        try expectRoundTrip([0x01, 0x01, 0x02, 0x00, 0x00, 0x00], identifier: 1, .commandReject(.commandNotUnderstood))
        // Reason 0x0001 with the actual signalling MTU (48).
        try expectRoundTrip([0x01, 0x02, 0x04, 0x00, 0x01, 0x00, 0x30, 0x00], identifier: 2,
                            .commandReject(.signalingMTUExceeded(actualMTU: 48)))
        // Reason 0x0002 with local CID 0x0040 then remote CID 0x0041.
        try expectRoundTrip([0x01, 0x03, 0x06, 0x00, 0x02, 0x00, 0x40, 0x00, 0x41, 0x00], identifier: 3,
                            .commandReject(.invalidCID(localCID: L2CAPChannelID(rawValue: 0x40),
                                                       remoteCID: L2CAPChannelID(rawValue: 0x41))))
        // A reserved reason keeps its data.
        try expectRoundTrip([0x01, 0x04, 0x03, 0x00, 0x07, 0x00, 0xEE], identifier: 4,
                            .commandReject(.other(reason: 7, data: [0xEE])))
    }

    @Test func disconnection() throws {
        let destination = L2CAPChannelID(rawValue: 0x0040), source = L2CAPChannelID(rawValue: 0x0041)
        try expectRoundTrip([0x06, 0x05, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00], identifier: 5,
                            .disconnectionRequest(L2CAPDisconnectionRequest(destinationCID: destination, sourceCID: source)))
        try expectRoundTrip([0x07, 0x05, 0x04, 0x00, 0x40, 0x00, 0x41, 0x00], identifier: 5,
                            .disconnectionResponse(L2CAPDisconnectionResponse(destinationCID: destination, sourceCID: source)))
    }

    @Test func connectionParameterUpdate() throws {
        // Interval 24…40 (30…50 ms), latency 0, timeout 42 (420 ms).
        let request = L2CAPConnectionParameterUpdateRequest(intervalMin: 0x18, intervalMax: 0x28, peripheralLatency: 0,
                                                            timeoutMultiplier: 0x2A)
        try expectRoundTrip([0x12, 0x01, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0x2A, 0x00], identifier: 1,
                            .connectionParameterUpdateRequest(request))
        try expectRoundTrip([0x13, 0x01, 0x02, 0x00, 0x00, 0x00], identifier: 1,
                            .connectionParameterUpdateResponse(.init(result: .accepted)))
        try expectRoundTrip([0x13, 0x01, 0x02, 0x00, 0x01, 0x00], identifier: 1,
                            .connectionParameterUpdateResponse(.init(result: .rejected)))
    }

    @Test func leCreditBasedConnection() throws {
        // SPSM 0x0080, source CID 0x0040, MTU 512, MPS 247, 10 credits.
        let request = L2CAPLECreditBasedConnectionRequest(spsm: 0x80, sourceCID: L2CAPChannelID(rawValue: 0x40), mtu: 512,
                                                          mps: 247, initialCredits: 10)
        try expectRoundTrip([0x14, 0x02, 0x0A, 0x00, 0x80, 0x00, 0x40, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00],
                            identifier: 2, .leCreditBasedConnectionRequest(request))
        let accepted = L2CAPLECreditBasedConnectionResponse(destinationCID: L2CAPChannelID(rawValue: 0x41), mtu: 512,
                                                            mps: 247, initialCredits: 10, result: .success)
        try expectRoundTrip([0x15, 0x02, 0x0A, 0x00, 0x41, 0x00, 0x00, 0x02, 0xF7, 0x00, 0x0A, 0x00, 0x00, 0x00],
                            identifier: 2, .leCreditBasedConnectionResponse(accepted))
        // A refusal: all zero but the result, 0x0002 "SPSM not supported".
        try expectRoundTrip([0x15, 0x02, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00],
                            identifier: 2, .leCreditBasedConnectionResponse(.refused(.spsmNotSupported)))
        try expectRoundTrip([0x16, 0x03, 0x04, 0x00, 0x40, 0x00, 0x05, 0x00], identifier: 3,
                            .flowControlCreditIndication(.init(cid: L2CAPChannelID(rawValue: 0x40), credits: 5)))
    }

    @Test func enhancedCreditBasedConnection() throws {
        let cids = [L2CAPChannelID(rawValue: 0x40), L2CAPChannelID(rawValue: 0x41)]
        // SPSM 0x0080, MTU 64, MPS 247, 10 credits, then the source CIDs; 8 + 2 × 2 = 12 octets.
        try expectRoundTrip([0x17, 0x04, 0x0C, 0x00, 0x80, 0x00, 0x40, 0x00, 0xF7, 0x00, 0x0A, 0x00, 0x40, 0x00, 0x41, 0x00],
                            identifier: 4,
                            .creditBasedConnectionRequest(.init(spsm: 0x80, mtu: 64, mps: 247, initialCredits: 10,
                                                                sourceCIDs: cids)))
        // MTU 64, MPS 247, 10 credits, result 0, then the destination CIDs.
        try expectRoundTrip([0x18, 0x04, 0x0C, 0x00, 0x40, 0x00, 0xF7, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x42, 0x00, 0x00, 0x00],
                            identifier: 4,
                            .creditBasedConnectionResponse(.init(mtu: 64, mps: 247, initialCredits: 10, result: .success,
                                                                 destinationCIDs: [L2CAPChannelID(rawValue: 0x42), .null])))
        try expectRoundTrip([0x19, 0x05, 0x08, 0x00, 0x00, 0x01, 0xF7, 0x00, 0x40, 0x00, 0x41, 0x00], identifier: 5,
                            .creditBasedReconfigureRequest(.init(mtu: 256, mps: 247, destinationCIDs: cids)))
        try expectRoundTrip([0x1A, 0x05, 0x02, 0x00, 0x01, 0x00], identifier: 5,
                            .creditBasedReconfigureResponse(.init(result: .mtuReductionNotAllowed)))
    }

    @Test func unknownAndBREDROnlyCodesAreKept() throws {
        // 0x08 Echo Request is BR/EDR only: the host answers Command Reject "not understood".
        try expectRoundTrip([0x08, 0x06, 0x02, 0x00, 0xAB, 0xCD], identifier: 6, .unknown(code: 0x08, data: [0xAB, 0xCD]))
        try expectRoundTrip([0x7F, 0x07, 0x00, 0x00], identifier: 7, .unknown(code: 0x7F, data: []))
        #expect(LESignalingCommand.unknown(code: 0x7F, data: []).code == LESignalingCode(rawValue: 0x7F))
    }

    @Test func codesKnowTheirNamesAndWhetherTheyAreResponses() {
        #expect(LESignalingCode.connectionParameterUpdateRequest.name == "Connection Parameter Update Request")
        #expect(LESignalingCode(rawValue: 0x55).name == "Unknown")
        #expect(LESignalingCode.commandReject.isResponse)
        #expect(LESignalingCode.leCreditBasedConnectionResponse.isResponse)
        #expect(!LESignalingCode.connectionParameterUpdateRequest.isResponse)
        #expect(!LESignalingCode.flowControlCreditIndication.isResponse)
        #expect(L2CAPCreditBasedConnectionResult.spsmNotSupported.description == "Connection refused – SPSM not supported (0x0002)")
    }

    @Test func packetLengthMustMatchData() {
        #expect(throws: PacketDecodingError.lengthMismatch(context: "LE signaling Connection Parameter Update Response",
                                                           declared: 2, actual: 1)) {
            try LESignalingPacket.decode([0x13, 0x01, 0x02, 0x00, 0x00])
        }
        #expect(throws: PacketDecodingError.self) { try LESignalingPacket.decode([0x13, 0x01, 0x02]) }
    }

    @Test func malformedKnownCommandsThrow() {
        // Connection Parameter Update Request with only 6 of its 8 octets.
        let short = LESignalingPacket(code: .connectionParameterUpdateRequest, identifier: 1,
                                      data: [0x18, 0x00, 0x28, 0x00, 0x00, 0x00])
        #expect(throws: PacketDecodingError.truncated(context: "LE signaling Connection Parameter Update Request",
                                                      needed: 2, available: 0)) { try short.command }
        // Disconnection Request with a trailing octet.
        let long = LESignalingPacket(code: .disconnectionRequest, identifier: 1, data: [0x40, 0x00, 0x41, 0x00, 0x00])
        #expect(throws: PacketDecodingError.trailingBytes(context: "LE signaling Disconnection Request", count: 1)) {
            try long.command
        }
        // Command Not Understood carries no reason data.
        let reject = LESignalingPacket(code: .commandReject, identifier: 1, data: [0x00, 0x00, 0x01])
        #expect(throws: PacketDecodingError.trailingBytes(context: "LE signaling Command Reject", count: 1)) {
            try reject.command
        }
        // A CID list with an odd number of octets.
        let odd = LESignalingPacket(code: .creditBasedReconfigureRequest, identifier: 1,
                                    data: [0x00, 0x01, 0xF7, 0x00, 0x40, 0x00, 0x41])
        #expect(throws: PacketDecodingError.invalidValue(context: "LE signaling Credit Based Reconfigure Request",
                                                         field: "CID list length", value: 3)) { try odd.command }
    }
}
