import BluetoothCore
import BluetoothHCI
import Testing

/// Malformed packets throw ``PacketDecodingError``; nothing traps.
@Suite(.timeLimit(.minutes(1))) struct MalformedInputTests {
    @Test func emptyAndShortEventPackets() {
        #expect(throws: PacketDecodingError.truncated(context: "HCI event", needed: 1, available: 0)) {
            _ = try HCIEvent.decode([])
        }
        #expect(throws: PacketDecodingError.truncated(context: "HCI event", needed: 1, available: 0)) {
            _ = try HCIEvent.decode([0x0E])
        }
    }

    @Test func eventLengthFieldDisagrees() {
        // Declares 5 parameter octets, 4 follow.
        #expect(throws: PacketDecodingError.lengthMismatch(context: "HCI event 0x5", declared: 5, actual: 4)) {
            _ = try HCIEvent.decode(bytes("05 05 00 40 00 13"))
        }
        // Declares 3, 4 follow.
        #expect(throws: PacketDecodingError.lengthMismatch(context: "HCI event 0x5", declared: 3, actual: 4)) {
            _ = try HCIEvent.decode(bytes("05 03 00 40 00 13"))
        }
    }

    @Test func truncatedEventParameters() {
        // Disconnection Complete without its Reason.
        #expect(throws: PacketDecodingError.truncated(context: "Disconnection Complete", needed: 1, available: 0)) {
            _ = try HCIEvent.decode(bytes("05 03 00 40 00"))
        }
        // LE Connection Complete cut after the address.
        #expect(throws: PacketDecodingError.self) {
            _ = try HCIEvent.decode(bytes("3e 0c 01 00 40 00 01 01 22 11 00 ee ff c0"))
        }
        // An LE Meta event with no subevent code.
        #expect(throws: PacketDecodingError.truncated(context: "LE Meta event", needed: 1, available: 0)) {
            _ = try HCIEvent.decode(bytes("3e 00"))
        }
    }

    @Test func trailingBytes() {
        #expect(throws: PacketDecodingError.trailingBytes(context: "Hardware Error", count: 1)) {
            _ = try HCIEvent.decode(bytes("10 02 01 00"))
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "LE Scan Timeout", count: 1)) {
            _ = try HCIEvent.decode(bytes("3e 02 11 00"))
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "LE PHY Update Complete", count: 2)) {
            _ = try HCIEvent.decode(bytes("3e 08 0c 00 40 00 02 02 00 00"))
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "LE Set Scan Enable", count: 1)) {
            _ = try LESetScanEnableCommand.decode(parameters: bytes("01 01 00"))
        }
    }

    @Test func numberOfCompletedPacketsCountMismatch() {
        // Count 2 but one handle/count pair: the second handle is missing.
        #expect(throws: PacketDecodingError.truncated(context: "Number Of Completed Packets", needed: 2, available: 0)) {
            _ = try HCIEvent.decode(bytes("13 05 02 40 00 01 00"))
        }
        // Count 2, second pair cut after its handle.
        #expect(throws: PacketDecodingError.truncated(context: "Number Of Completed Packets", needed: 2, available: 0)) {
            _ = try HCIEvent.decode(bytes("13 07 02 40 00 01 00 41 00"))
        }
        // Count 1 but two pairs: four octets left over.
        #expect(throws: PacketDecodingError.trailingBytes(context: "Number Of Completed Packets", count: 4)) {
            _ = try HCIEvent.decode(bytes("13 09 01 40 00 01 00 41 00 02 00"))
        }
    }

    @Test func commandPacketLengthMismatch() {
        // Reset declaring one parameter octet that is not there.
        #expect(throws: PacketDecodingError.self) { _ = try HCICommandPacket.decode(bytes("03 0c 01")) }
        #expect(throws: PacketDecodingError.self) { _ = try HCICommandPacket.decode(bytes("03 0c")) }
    }

    @Test func commandParametersTooShortOrLong() {
        #expect(throws: PacketDecodingError.truncated(context: "LE Set Data Length", needed: 2, available: 1)) {
            _ = try LESetDataLengthCommand.decode(parameters: bytes("40 00 fb 00 48"))
        }
        #expect(throws: PacketDecodingError.trailingBytes(context: "Reset", count: 1)) {
            _ = try ResetCommand.decode(parameters: [0])
        }
    }

    @Test func invalidEnumerationsInEvents() {
        expectInvalidValue(field: "Role", value: 2) {
            _ = try HCIEvent.decode(bytes("3e 13 01 00 40 00 02 01 22 11 00 ee ff c0 28 00 00 00 f4 01 05"))
        }
        expectInvalidValue(field: "Peer_Address_Type", value: 9) {
            _ = try HCIEvent.decode(bytes("3e 13 01 00 40 00 01 09 22 11 00 ee ff c0 28 00 00 00 f4 01 05"))
        }
        expectInvalidValue(field: "Central_Clock_Accuracy", value: 8) {
            _ = try HCIEvent.decode(bytes("3e 13 01 00 40 00 01 01 22 11 00 ee ff c0 28 00 00 00 f4 01 08"))
        }
        expectInvalidValue(field: "Encryption_Enabled", value: 3) {
            _ = try HCIEvent.decode(bytes("08 04 00 40 00 03"))
        }
        expectInvalidValue(field: "TX_PHY", value: 0) {
            _ = try HCIEvent.decode(bytes("3e 06 0c 00 40 00 00 02"))
        }
        expectInvalidValue(field: "Channel_Selection_Algorithm", value: 2) {
            _ = try HCIEvent.decode(bytes("3e 04 14 40 00 02"))
        }
    }

    @Test func invalidEnumerationsInReturnParameters() {
        expectInvalidValue(field: "RX_PHY", value: 9) {
            _ = try LEReadPHYCommand.ReturnParameters.decode(returnParameters: bytes("40 00 01 09"), context: "LE Read PHY")
        }
    }

    @Test func connectionHandleFlagsAreMasked() throws {
        // Handle octets 0x2040: the top four bits are dropped.
        #expect(try HCIEvent.decode(bytes("05 04 00 40 20 13"))
                == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: 0x0040, reason: .remoteUserTerminatedConnection)))
        guard case let .le(.connectionComplete(event)) = try HCIEvent.decode(bytes("3e 13 01 00 40 f0 01 01 22 11 00 ee ff c0 28 00 00 00 f4 01 05")) else {
            Issue.record("not an LE Connection Complete")
            return
        }
        #expect(event.connectionHandle == 0x0040)
    }

    @Test func unknownOpcodeInCatalogue() {
        #expect(throws: PacketDecodingError.unknownOpcode(context: "HCI command", opcode: 0xFC3F)) {
            _ = try HCICommandCatalogue.decode(HCICommandPacket(opcode: HCIOpcode(rawValue: 0xFC3F), parameters: []))
        }
    }
}
