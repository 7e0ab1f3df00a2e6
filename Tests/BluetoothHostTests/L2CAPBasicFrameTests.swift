import BluetoothCore
import Testing
import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct L2CAPBasicFrameTests {
    @Test func encodesLengthChannelAndPayload() throws {
        // Length 0x0003, CID 0x0004 (ATT), payload = ATT Read Request for handle 0x0003.
        let bytes: [UInt8] = [0x03, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00]
        let frame = L2CAPBasicFrame(channelID: .att, payload: [0x0A, 0x03, 0x00])
        #expect(frame.encode() == bytes)
        #expect(frame.length == 3)
        #expect(try L2CAPBasicFrame.decode(bytes) == frame)
    }

    @Test func fixedChannelIdentifiers() {
        #expect(L2CAPChannelID.att.rawValue == 0x0004)
        #expect(L2CAPChannelID.leSignaling.rawValue == 0x0005)
        #expect(L2CAPChannelID.securityManager.rawValue == 0x0006)
        #expect(L2CAPChannelID(rawValue: 0x0040).isLEDynamic)
        #expect(!L2CAPChannelID.att.isLEDynamic)
        #expect(L2CAPChannelID.leSignaling.description == "0x0005 (LE signaling)")
    }

    @Test func emptyPayloadOnSMPChannel() throws {
        let bytes: [UInt8] = [0x00, 0x00, 0x06, 0x00]
        #expect(try L2CAPBasicFrame.decode(bytes) == L2CAPBasicFrame(channelID: .securityManager, payload: []))
    }

    @Test func lengthFieldMustMatchPayload() {
        #expect(throws: PacketDecodingError.lengthMismatch(context: "L2CAP B-frame", declared: 4, actual: 3)) {
            try L2CAPBasicFrame.decode([0x04, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00])
        }
        #expect(throws: PacketDecodingError.lengthMismatch(context: "L2CAP B-frame", declared: 2, actual: 3)) {
            try L2CAPBasicFrame.decode([0x02, 0x00, 0x04, 0x00, 0x0A, 0x03, 0x00])
        }
    }

    @Test func shortHeaderIsTruncated() {
        #expect(throws: PacketDecodingError.truncated(context: "L2CAP B-frame", needed: 2, available: 1)) {
            try L2CAPBasicFrame.decode([0x03, 0x00, 0x04])
        }
    }
}
