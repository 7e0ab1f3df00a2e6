import BluetoothCore
import BluetoothHCI
import Testing

/// LE Meta subevents (Core 6.0, Vol 4, Part E, 7.7.65): event code 0x3E, length, subevent code,
/// parameters.
@Suite(.timeLimit(.minutes(1))) struct LEMetaEventTests {
    @Test func connectionComplete() throws {
        // Handle 0x0040, peripheral, peer random C0:FF:EE:00:11:22, interval 0x0028, latency 0,
        // timeout 0x01F4, 50 ppm (0x05); length 1 + 18 = 19.
        let event = LEConnectionCompleteEvent(connectionHandle: 0x0040, role: .peripheral, peerAddressType: .random,
                                              peerAddress: address("C0:FF:EE:00:11:22"), connectionInterval: 0x0028,
                                              peripheralLatency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: .ppm50)
        #expect(event.peer == DeviceAddress(address("C0:FF:EE:00:11:22"), type: .random))
        try expectEvent(.le(.connectionComplete(event)), "3e 13 01 00 40 00 01 01 22 11 00 ee ff c0 28 00 00 00 f4 01 05")
    }

    @Test func connectionCompleteAfterCancel() throws {
        // LE Create Connection Cancel: status Unknown Connection Identifier (0x02), rest zero.
        let decoded = try HCIEvent.decode(bytes("3e 13 01 02 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
        guard case let .le(.connectionComplete(event)) = decoded else {
            Issue.record("not an LE Connection Complete: \(decoded)")
            return
        }
        #expect(event.status == .unknownConnectionIdentifier)
        #expect(event.role == .central)
    }

    @Test func enhancedConnectionComplete() throws {
        // Central, peer public identity (0x02) 00:11:22:33:44:55, local RPA 4A:00:00:00:00:01,
        // peer RPA 5B:11:22:33:44:55, 20 ppm (0x07); length 1 + 30 = 31.
        let event = LEEnhancedConnectionCompleteEvent(
            connectionHandle: 0x0041, role: .central, peerAddressType: .publicIdentity, peerAddress: address("00:11:22:33:44:55"),
            localResolvablePrivateAddress: address("4A:00:00:00:00:01"), peerResolvablePrivateAddress: address("5B:11:22:33:44:55"),
            connectionInterval: 0x0018, peripheralLatency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: .ppm20)
        try expectEvent(.le(.enhancedConnectionComplete(event)),
                        "3e 1f 0a 00 41 00 00 02 55 44 33 22 11 00 01 00 00 00 00 4a 55 44 33 22 11 5b 18 00 00 00 f4 01 07")
    }

    @Test func enhancedConnectionCompleteV2() throws {
        // Subevent 0x29: v1 fields, then advertising handle 0 and sync handle 0xFFFF; length 34.
        let event = LEEnhancedConnectionCompleteV2Event(
            connectionHandle: 0x0041, role: .peripheral, peerAddressType: .random, peerAddress: address("C0:FF:EE:00:11:22"),
            connectionInterval: 0x0018, peripheralLatency: 0, supervisionTimeout: 0x01F4, centralClockAccuracy: .ppm500,
            advertisingHandle: 0, syncHandle: LEEnhancedConnectionCompleteV2Event.noSyncHandle)
        try expectEvent(.le(.enhancedConnectionCompleteV2(event)),
                        "3e 22 29 00 41 00 01 01 22 11 00 ee ff c0 00 00 00 00 00 00 00 00 00 00 00 00 18 00 00 00 f4 01 00 00 ff ff")
    }

    @Test func connectionUpdateComplete() throws {
        try expectEvent(.le(.connectionUpdateComplete(LEConnectionUpdateCompleteEvent(
            connectionHandle: 0x0040, connectionInterval: 0x0018, peripheralLatency: 0, supervisionTimeout: 0x0048))),
                        "3e 0a 03 00 40 00 18 00 00 00 48 00")
    }

    @Test func readRemoteFeaturesComplete() throws {
        // Bits 0, 2, 4, 5 → 0x35.
        try expectEvent(.le(.readRemoteFeaturesComplete(LEReadRemoteFeaturesCompleteEvent(
            connectionHandle: 0x0040, features: [.encryption, .extendedReject, .ping, .dataPacketLengthExtension]))),
                        "3e 0c 04 00 40 00 35 00 00 00 00 00 00 00")
    }

    @Test func longTermKeyRequest() throws {
        // Rand 0x0123456789ABCDEF and EDIV 0xBEEF, least significant octet first; length 13.
        try expectEvent(.le(.longTermKeyRequest(LELongTermKeyRequestEvent(
            connectionHandle: 0x0040, randomNumber: 0x0123_4567_89AB_CDEF, encryptedDiversifier: 0xBEEF))),
                        "3e 0d 05 40 00 ef cd ab 89 67 45 23 01 ef be")
    }

    @Test func remoteConnectionParameterRequest() throws {
        try expectEvent(.le(.remoteConnectionParameterRequest(LERemoteConnectionParameterRequestEvent(
            connectionHandle: 0x0040, intervalMin: 6, intervalMax: 12, maxLatency: 0, timeout: 0x00C8))),
                        "3e 0b 06 40 00 06 00 0c 00 00 00 c8 00")
    }

    @Test func dataLengthChange() throws {
        try expectEvent(.le(.dataLengthChange(LEDataLengthChangeEvent(
            connectionHandle: 0x0040, maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120))),
                        "3e 0b 07 40 00 fb 00 48 08 fb 00 48 08")
    }

    @Test func phyUpdateComplete() throws {
        try expectEvent(.le(.phyUpdateComplete(LEPHYUpdateCompleteEvent(connectionHandle: 0x0040, txPHY: .le2M, rxPHY: .le2M))),
                        "3e 06 0c 00 40 00 02 02")
        // Refused by the peer: Unsupported Remote Feature (0x1A), the PHYs unchanged.
        try expectEvent(.le(.phyUpdateComplete(LEPHYUpdateCompleteEvent(status: .unsupportedRemoteFeature, connectionHandle: 0x0040,
                                                                         txPHY: .le1M, rxPHY: .le1M))),
                        "3e 06 0c 1a 40 00 01 01")
    }

    @Test func scanTimeout() throws {
        try expectEvent(.le(.scanTimeout), "3e 01 11")
    }

    @Test func advertisingSetTerminated() throws {
        // Set 0 ended because connection 0x0040 was created after 5 advertising events.
        try expectEvent(.le(.advertisingSetTerminated(LEAdvertisingSetTerminatedEvent(
            advertisingHandle: 0, connectionHandle: 0x0040, numCompletedExtendedAdvertisingEvents: 5))),
                        "3e 06 12 00 00 40 00 05")
    }

    @Test func channelSelectionAlgorithm() throws {
        try expectEvent(.le(.channelSelectionAlgorithm(LEChannelSelectionAlgorithmEvent(connectionHandle: 0x0040, channelSelectionAlgorithm: .algorithm2))),
                        "3e 04 14 40 00 01")
    }

    @Test func unknownSubeventIsKept() throws {
        try expectEvent(.le(.unknown(subevent: 0x2B, parameters: [1, 2])), "3e 03 2b 01 02")
    }
}
