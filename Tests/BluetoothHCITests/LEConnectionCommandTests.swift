import BluetoothCore
import BluetoothHCI
import Testing

/// Initiating and connection management (Core 6.0, Vol 4, Part E, 7.8.12, 7.8.13, 7.8.18,
/// 7.8.21, 7.8.31, 7.8.32, 7.8.66).
@Suite(.timeLimit(.minutes(1))) struct LEConnectionCommandTests {
    @Test func leCreateConnection() throws {
        // Scan 0x0060/0x0030, use peer address, peer random C0:FF:EE:00:11:22 (LSB first), own
        // public, interval 0x0018...0x0028 (30–50 ms), latency 0, timeout 0x01F4 (5 s), CE 0/0;
        // length 2 + 2 + 1 + 1 + 6 + 1 + 6 × 2 = 25.
        let command = LECreateConnectionCommand(
            scanInterval: 0x0060, scanWindow: 0x0030, peerAddressType: .random, peerAddress: address("C0:FF:EE:00:11:22"),
            connectionIntervalMin: 0x0018, connectionIntervalMax: 0x0028, maxLatency: 0, supervisionTimeout: 0x01F4)
        #expect(command.peer == DeviceAddress(address("C0:FF:EE:00:11:22"), type: .random))
        try expectCommand(command, "0d 20 19 60 00 30 00 00 01 22 11 00 ee ff c0 00 18 00 28 00 00 00 f4 01 00 00 00 00")
        #expect(LECreateConnectionCommand.acknowledgement == .commandStatus)
    }

    @Test func leExtendedCreateConnection() throws {
        // Initiating_PHYs 1M | Coded = 0x05, then two 16-octet sets; length 10 + 32 = 42.
        let command = LEExtendedCreateConnectionCommand(
            peerAddressType: .public, peerAddress: address("00:11:22:33:44:55"),
            le1M: .init(scanInterval: 0x0060, scanWindow: 0x0060, connectionIntervalMin: 0x0018, connectionIntervalMax: 0x0028,
                        maxLatency: 0, supervisionTimeout: 0x01F4),
            leCoded: .init(scanInterval: 0x0120, scanWindow: 0x0120, connectionIntervalMin: 0x0030, connectionIntervalMax: 0x0040,
                           maxLatency: 2, supervisionTimeout: 0x0258))
        #expect(command.initiatingPHYs == [.le1M, .leCoded])
        try expectCommand(command, """
            43 20 2a 00 00 00 55 44 33 22 11 00 05
            60 00 60 00 18 00 28 00 00 00 f4 01 00 00 00 00
            20 01 20 01 30 00 40 00 02 00 58 02 00 00 00 00
            """.replacingOccurrences(of: "\n", with: " "))
        #expect(LEExtendedCreateConnectionCommand.acknowledgement == .commandStatus)
    }

    @Test func leExtendedCreateConnectionWith2M() throws {
        // All three PHYs (0x07): the 2M set sits between the 1M and Coded sets.
        let set = LEExtendedCreateConnectionCommand.PHYParameters(
            scanInterval: 0x0010, scanWindow: 0x0010, connectionIntervalMin: 0x0006, connectionIntervalMax: 0x0006,
            maxLatency: 0, supervisionTimeout: 0x000A)
        var second = set
        second.connectionIntervalMax = 0x0007
        let command = LEExtendedCreateConnectionCommand(
            initiatorFilterPolicy: .useFilterAcceptList, ownAddressType: .random, peerAddressType: .public, peerAddress: .zero,
            le1M: set, le2M: second, leCoded: set)
        try expectCommand(command, """
            43 20 3a 01 01 00 00 00 00 00 00 00 07
            10 00 10 00 06 00 06 00 00 00 0a 00 00 00 00 00
            10 00 10 00 06 00 07 00 00 00 0a 00 00 00 00 00
            10 00 10 00 06 00 06 00 00 00 0a 00 00 00 00 00
            """.replacingOccurrences(of: "\n", with: " "))
    }

    @Test func initiatingPHYsMustBeKnownBits() {
        expectInvalidValue(field: "Initiating_PHYs", value: 0x08) {
            _ = try LEExtendedCreateConnectionCommand.decode(parameters: bytes("00 00 00 00 00 00 00 00 00 08"))
        }
    }

    @Test func leCreateConnectionCancel() throws {
        try expectCommand(LECreateConnectionCancelCommand(), "0e 20 00")
        #expect(LECreateConnectionCancelCommand.acknowledgement == .commandComplete)
    }

    @Test func leConnectionUpdate() throws {
        // Interval 6...12 (7.5–15 ms), latency 4, timeout 0x00C8 (2 s); length 14.
        try expectCommand(LEConnectionUpdateCommand(connectionHandle: 0x0001, connectionIntervalMin: 6, connectionIntervalMax: 12,
                                                    maxLatency: 4, supervisionTimeout: 0x00C8),
                          "13 20 0e 01 00 06 00 0c 00 04 00 c8 00 00 00 00 00")
        #expect(LEConnectionUpdateCommand.acknowledgement == .commandStatus)
    }

    @Test func leReadRemoteFeatures() throws {
        try expectCommand(LEReadRemoteFeaturesCommand(connectionHandle: 0x0001), "16 20 02 01 00")
        #expect(LEReadRemoteFeaturesCommand.acknowledgement == .commandStatus)
    }

    @Test func leRemoteConnectionParameterRequestReply() throws {
        try expectCommand(LERemoteConnectionParameterRequestReplyCommand(connectionHandle: 0x0002, intervalMin: 0x0010, intervalMax: 0x0020,
                                                                         maxLatency: 0, timeout: 0x0064),
                          "20 20 0e 02 00 10 00 20 00 00 00 64 00 00 00 00 00")
        try expectReturn(LERemoteConnectionParameterRequestReplyCommand.self, .init(connectionHandle: 0x0002), "0e 06 01 20 20 00 02 00")
    }

    @Test func leRemoteConnectionParameterRequestNegativeReply() throws {
        // Reason 0x3B Unacceptable Connection Parameters.
        try expectCommand(LERemoteConnectionParameterRequestNegativeReplyCommand(connectionHandle: 0x0002), "21 20 03 02 00 3b")
        try expectReturn(LERemoteConnectionParameterRequestNegativeReplyCommand.self, .init(connectionHandle: 0x0002), "0e 06 01 21 20 00 02 00")
    }

    @Test func invalidConnectionValues() {
        // Initiator_Filter_Policy 0x02 and a peer address type 0x04 are not allowed.
        expectInvalidValue(field: "Initiator_Filter_Policy", value: 2) {
            _ = try LECreateConnectionCommand.decode(parameters: bytes("60 00 30 00 02 01 22 11 00 ee ff c0 00 18 00 28 00 00 00 f4 01 00 00 00 00"))
        }
        expectInvalidValue(field: "Peer_Address_Type", value: 4) {
            _ = try LECreateConnectionCommand.decode(parameters: bytes("60 00 30 00 00 04 22 11 00 ee ff c0 00 18 00 28 00 00 00 f4 01 00 00 00 00"))
        }
        expectInvalidValue(field: "Own_Address_Type", value: 4) {
            _ = try LECreateConnectionCommand.decode(parameters: bytes("60 00 30 00 00 00 22 11 00 ee ff c0 04 18 00 28 00 00 00 f4 01 00 00 00 00"))
        }
    }
}
