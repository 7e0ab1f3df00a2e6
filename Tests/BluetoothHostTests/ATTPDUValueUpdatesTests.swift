import Testing
import BluetoothHost

private func expectRoundTrip(_ pdu: ATTPDU, _ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) throws {
    #expect(pdu.encode() == bytes, sourceLocation: sourceLocation)
    #expect(try ATTPDU.decode(bytes) == pdu, sourceLocation: sourceLocation)
}

@Suite(.timeLimit(.minutes(1))) struct ATTPDUValueUpdatesTests {
    @Test func notificationIndicationConfirmation() throws {
        let notification = ATTPDU.handleValueNotification(.init(handle: 0x0003, value: [0x64]))
        try expectRoundTrip(notification, [0x1B, 0x03, 0x00, 0x64])
        #expect(notification.kind == .notification)
        let indication = ATTPDU.handleValueIndication(.init(handle: 0x0003, value: [0x64]))
        try expectRoundTrip(indication, [0x1D, 0x03, 0x00, 0x64])
        #expect(indication.kind == .indication)
        #expect(indication.expectedResponseOpcode == nil)
        try expectRoundTrip(.handleValueConfirmation(.init()), [0x1E])
        #expect(ATTPDU.handleValueConfirmation(.init()).kind == .confirmation)
    }

    @Test func multipleHandleValueNotification() throws {
        // (handle 0x0003, length 1, 64) (handle 0x0005, length 2, 01 02).
        try expectRoundTrip(.multipleHandleValueNotification(.init(values: [.init(handle: 3, value: [0x64]),
                                                                            .init(handle: 5, value: [1, 2])])),
                            [0x23, 0x03, 0x00, 0x01, 0x00, 0x64, 0x05, 0x00, 0x02, 0x00, 0x01, 0x02])
    }
}
