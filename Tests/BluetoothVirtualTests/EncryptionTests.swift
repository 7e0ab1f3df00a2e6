import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

/// LE link encryption between two virtual controllers driven with raw HCI (Core 6.0, Vol 6,
/// Part B, 5.1.3; Vol 4, Part E, 7.8.24-7.8.26, 7.7.8, 7.7.39, 7.7.65.5).
@Suite("Virtual link: encryption", .timeLimit(.minutes(1)))
struct EncryptionTests {
    static let key: [UInt8] = Array(0x10...0x1F)
    static let otherKey: [UInt8] = Array(0x20...0x2F)

    /// The central's host sends LE Enable Encryption; returns the peripheral's LE Long Term
    /// Key Request and when each happened.
    private func requestEncryption(_ pair: ConnectedPair, key: [UInt8] = key, randomNumber: UInt64 = 0x0102_0304_0506_0708,
                                   diversifier: UInt16 = 0xBEEF) async throws -> (LELongTermKeyRequestEvent, sentAt: Duration, askedAt: Duration) {
        let sentAt = pair.central.now
        let status = try await pair.central.status(LEEnableEncryptionCommand(
            connectionHandle: pair.centralHandle, randomNumber: randomNumber, encryptedDiversifier: diversifier, longTermKey: key))
        #expect(status == .success)
        let (event, askedAt) = try await pair.peripheral.leEvent("LE Long Term Key Request") {
            if case .longTermKeyRequest = $0 { return true }
            return false
        }
        guard case let .longTermKeyRequest(request) = event else { throw TestTimeout(description: "unreachable") }
        return (request, sentAt, askedAt)
    }

    /// The next encryption outcome a host hears: Encryption Change, Encryption Key Refresh
    /// Complete or Disconnection Complete.
    private func outcome(_ host: HCITestHost) async throws -> HCIEvent {
        try await host.event("an encryption outcome") { event in
            switch event {
            case .encryptionChange, .encryptionChangeV2, .encryptionKeyRefreshComplete, .disconnectionComplete: return true
            default: return false
            }
        }.0
    }

    private static func isEncryptionEvent(_ received: Received) -> Bool {
        switch received.event {
        case .encryptionChange?, .encryptionChangeV2?, .encryptionKeyRefreshComplete?: return true
        default: return false
        }
    }

    private static func isLongTermKeyRequest(_ received: Received) -> Bool {
        if case .longTermKeyRequest? = received.le { return true }
        return false
    }

    /// Encrypts the pair's link with `key` and checks both ends report it.
    private func encrypt(_ pair: ConnectedPair, key: [UInt8] = key) async throws {
        _ = try await requestEncryption(pair, key: key)
        let reply = try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: key))
        #expect(reply.status == .success)
        #expect(try await outcome(pair.peripheral) == .encryptionChange(EncryptionChangeEvent(connectionHandle: pair.peripheralHandle, encryptionEnabled: .on)))
        #expect(try await outcome(pair.central) == .encryptionChange(EncryptionChangeEvent(connectionHandle: pair.centralHandle, encryptionEnabled: .on)))
    }

    @Test func equalKeysEncryptTheLinkOnBothEnds() async throws {
        let pair = try await ConnectedPair.make(interval: 12)
        let (request, sentAt, askedAt) = try await requestEncryption(pair)
        #expect(request == LELongTermKeyRequestEvent(connectionHandle: pair.peripheralHandle, randomNumber: 0x0102_0304_0506_0708, encryptedDiversifier: 0xBEEF))
        // LL_ENC_REQ travels in a connection event: not before the next one (15 ms apart).
        #expect(askedAt > sentAt, "the request crosses the air")
        #expect((askedAt - sentAt).milliseconds <= 15.1)
        #expect(pair.central.controller.encryptionKey(ofConnection: pair.centralHandle) == nil, "not encrypted before the peripheral's host answers")

        let repliedAt = pair.peripheral.now
        let reply = try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key))
        #expect(reply.status == .success)
        #expect(reply.returnParameters == [0x00] + pair.peripheralHandle.littleEndianBytes, "Command Complete returns the handle")
        let (change, changedAt) = try await pair.central.event("Encryption Change") { if case .encryptionChange = $0 { return true }; return false }
        #expect(change == .encryptionChange(EncryptionChangeEvent(connectionHandle: pair.centralHandle, encryptionEnabled: .on)))
        #expect(try await outcome(pair.peripheral) == .encryptionChange(EncryptionChangeEvent(connectionHandle: pair.peripheralHandle, encryptionEnabled: .on)))
        // LL_ENC_RSP / LL_START_ENC_REQ, then the two LL_START_ENC_RSP: two more events.
        #expect((changedAt - repliedAt).milliseconds > 15, "the start handshake takes more than one connection event")
        #expect(pair.central.controller.encryptionKey(ofConnection: pair.centralHandle) == Self.key)
        #expect(pair.peripheral.controller.encryptionKey(ofConnection: pair.peripheralHandle) == Self.key)

        // Data still flows on the encrypted link.
        try pair.central.sendACL(handle: pair.centralHandle, [1, 0, 0x04, 0x00, 7])
        #expect(try await pair.peripheral.acl().0.data == [1, 0, 0x04, 0x00, 7])
    }

    @Test func restartWithANewKeyRefreshesItOnBothEnds() async throws {
        let pair = try await ConnectedPair.make()
        try await encrypt(pair)
        let (request, _, _) = try await requestEncryption(pair, key: Self.otherKey, randomNumber: 0, diversifier: 0)
        #expect(request == LELongTermKeyRequestEvent(connectionHandle: pair.peripheralHandle))
        #expect(pair.central.controller.encryptionKey(ofConnection: pair.centralHandle) == Self.key, "the old key until the restart completes")
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.otherKey)).status == .success)
        // Encryption Key Refresh Complete, not Encryption Change (Core 6.0, Vol 4, Part E, 7.7.39).
        #expect(try await outcome(pair.central) == .encryptionKeyRefreshComplete(EncryptionKeyRefreshCompleteEvent(connectionHandle: pair.centralHandle)))
        #expect(try await outcome(pair.peripheral) == .encryptionKeyRefreshComplete(EncryptionKeyRefreshCompleteEvent(connectionHandle: pair.peripheralHandle)))
        #expect(pair.central.controller.encryptionKey(ofConnection: pair.centralHandle) == Self.otherKey)
        #expect(pair.peripheral.controller.encryptionKey(ofConnection: pair.peripheralHandle) == Self.otherKey)
    }

    @Test func differentKeysEndTheLinkWithMICFailure() async throws {
        let pair = try await ConnectedPair.make()
        _ = try await requestEncryption(pair)
        let reply = try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.otherKey))
        #expect(reply.status == .success)
        #expect(try await outcome(pair.central) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.centralHandle, reason: .connectionTerminatedMICFailure)))
        #expect(try await outcome(pair.peripheral) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.peripheralHandle, reason: .connectionTerminatedMICFailure)))
        #expect(pair.central.controller.connectionHandles.isEmpty)
        #expect(pair.peripheral.controller.connectionHandles.isEmpty)
    }

    @Test func restartWithDifferentKeysAlsoEndsTheLink() async throws {
        let pair = try await ConnectedPair.make()
        try await encrypt(pair)
        _ = try await requestEncryption(pair, key: Self.otherKey)
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)).status == .success)
        #expect(try await outcome(pair.central) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.centralHandle, reason: .connectionTerminatedMICFailure)))
        #expect(try await outcome(pair.peripheral) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.peripheralHandle, reason: .connectionTerminatedMICFailure)))
    }

    @Test func negativeReplyLeavesTheLinkUpAndUnencrypted() async throws {
        let pair = try await ConnectedPair.make()
        _ = try await requestEncryption(pair)
        let reply = try await pair.peripheral.complete(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: pair.peripheralHandle))
        #expect(reply.status == .success)
        #expect(reply.returnParameters == [0x00] + pair.peripheralHandle.littleEndianBytes)
        // PIN or Key Missing, encryption off, to the central only (Core 6.0, Vol 6, Part B, 5.1.3.1).
        #expect(try await outcome(pair.central) == .encryptionChange(EncryptionChangeEvent(
            status: .pinOrKeyMissing, connectionHandle: pair.centralHandle, encryptionEnabled: .off)))
        #expect(try await pair.peripheral.expectNothing("an encryption event", for: .milliseconds(200), where: Self.isEncryptionEvent))
        #expect(pair.central.controller.encryptionKey(ofConnection: pair.centralHandle) == nil)
        #expect(pair.central.controller.connectionHandles == [pair.centralHandle])
        try pair.central.sendACL(handle: pair.centralHandle, [1, 0, 0x04, 0x00, 9])
        #expect(try await pair.peripheral.acl().0.data == [1, 0, 0x04, 0x00, 9])
        // The request was answered: another answer has nothing to answer.
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestNegativeReplyCommand(connectionHandle: pair.peripheralHandle)).status == .commandDisallowed)
        // And the central may try again.
        try await encrypt(pair)
    }

    @Test func peripheralWhoseHostMaskedTheRequestRefusesIt() async throws {
        let link = VirtualLink.manual()
        let pair = try await ConnectedPair.make(link: link)
        var events = HCITestHost.allLEEvents
        events.remove(.longTermKeyRequest)
        #expect(try await pair.peripheral.complete(LESetEventMaskCommand(mask: events)).status == .success)
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: pair.centralHandle, longTermKey: Self.key)) == .success)
        #expect(try await outcome(pair.central) == .encryptionChange(EncryptionChangeEvent(
            status: .pinOrKeyMissing, connectionHandle: pair.centralHandle, encryptionEnabled: .off)))
        #expect(try await pair.peripheral.expectNothing("LE Long Term Key Request", for: .milliseconds(100), where: Self.isLongTermKeyRequest))
    }

    @Test func peerWithoutLEEncryptionRejectsTheRequest() async throws {
        var features = VirtualController.defaultLEFeatures
        features.remove(.encryption)
        let pair = try await ConnectedPair.make(peripheralConfiguration: .init(leFeatures: features))
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: pair.centralHandle, longTermKey: Self.key)) == .success)
        #expect(try await outcome(pair.central) == .encryptionChange(EncryptionChangeEvent(
            status: .unsupportedRemoteFeature, connectionHandle: pair.centralHandle, encryptionEnabled: .off)))
        // And a controller without it refuses the command.
        #expect(try await pair.peripheral.status(LEEnableEncryptionCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)) == .unsupportedFeatureOrParameter)
    }

    @Test func commandsThatAreNotAllowed() async throws {
        let pair = try await ConnectedPair.make()
        // Only the central starts encryption (Core 6.0, Vol 4, Part E, 7.8.24).
        #expect(try await pair.peripheral.status(LEEnableEncryptionCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)) == .commandDisallowed)
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: 0x0123, longTermKey: Self.key)) == .unknownConnectionIdentifier)
        // No request to answer.
        let unasked = try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key))
        #expect(unasked.status == .commandDisallowed)
        #expect(unasked.returnParameters == [HCIStatus.commandDisallowed.rawValue] + pair.peripheralHandle.littleEndianBytes)
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: 0x0123, longTermKey: Self.key)).status == .unknownConnectionIdentifier)

        _ = try await requestEncryption(pair)
        // One procedure at a time.
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: pair.centralHandle, longTermKey: Self.otherKey)) == .commandDisallowed)
        // The request is the peripheral's host's to answer, not the central's.
        #expect(try await pair.central.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.centralHandle, longTermKey: Self.key)).status == .commandDisallowed)
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)).status == .success)
        #expect(try await outcome(pair.central) == .encryptionChange(EncryptionChangeEvent(connectionHandle: pair.centralHandle, encryptionEnabled: .on)))
    }

    @Test func aRequestNeverAnsweredStaysPendingAndDiesWithTheLink() async throws {
        let pair = try await ConnectedPair.make()
        _ = try await requestEncryption(pair)
        // The peripheral's host never answers: nothing happens, the link stays up.
        #expect(try await pair.central.expectNothing("an encryption outcome", for: .seconds(2), where: Self.isEncryptionEvent))
        #expect(pair.central.controller.connectionHandles == [pair.centralHandle])
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: pair.centralHandle, longTermKey: Self.key)) == .commandDisallowed,
                "still in progress")

        #expect(pair.central.controller.dropConnection(handle: pair.centralHandle))
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .connectionTimeout)
        #expect(try await pair.peripheral.disconnection(handle: pair.peripheralHandle).0.reason == .connectionTimeout)
        // A late answer names no connection, and nothing follows.
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)).status == .unknownConnectionIdentifier)
        #expect(try await pair.central.expectNothing("an encryption outcome", for: .milliseconds(200), where: Self.isEncryptionEvent))

        // A new connection starts clean: not encrypted, no request waiting, and encryption works.
        try await pair.peripheral.advertise()
        #expect(try await pair.central.createConnection(to: pair.peripheral.publicAddress) == .success)
        let centralHandle = try await pair.central.connectionComplete().0.connectionHandle
        let peripheralHandle = try await pair.peripheral.connectionComplete().0.connectionHandle
        #expect(pair.central.controller.encryptionKey(ofConnection: centralHandle) == nil)
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: peripheralHandle, longTermKey: Self.key)).status == .commandDisallowed)
        let fresh = ConnectedPair(link: pair.link, central: pair.central, peripheral: pair.peripheral, centralHandle: centralHandle,
                                  peripheralHandle: peripheralHandle, connectedAt: pair.central.now)
        try await encrypt(fresh)
    }

    @Test func droppingTheLinkDuringTheStartHandshakeReportsOnlyTheDisconnection() async throws {
        let pair = try await ConnectedPair.make()
        _ = try await requestEncryption(pair)
        #expect(try await pair.peripheral.complete(LELongTermKeyRequestReplyCommand(connectionHandle: pair.peripheralHandle, longTermKey: Self.key)).status == .success)
        // The fault strikes before LL_START_ENC_RSP got through.
        #expect(pair.peripheral.controller.dropConnection(handle: pair.peripheralHandle))
        #expect(try await outcome(pair.central) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.centralHandle, reason: .connectionTimeout)))
        #expect(try await outcome(pair.peripheral) == .disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: pair.peripheralHandle, reason: .connectionTimeout)))
        #expect(try await pair.central.expectNothing("an encryption event", for: .milliseconds(200), where: Self.isEncryptionEvent))
        #expect(try await pair.peripheral.expectNothing("an encryption event", for: .milliseconds(1), where: Self.isEncryptionEvent))
    }

    @Test func aPeripheralOutOfRangeNeverGetsTheRequest() async throws {
        // LL_ENC_REQ needs a connection event that gets through.
        let pair = try await ConnectedPair.make(timeout: 100)
        pair.peripheral.controller.move(to: VirtualPosition(x: 10_000, y: 0))
        #expect(try await pair.central.status(LEEnableEncryptionCommand(connectionHandle: pair.centralHandle, longTermKey: Self.key)) == .success)
        #expect(try await pair.central.disconnection(handle: pair.centralHandle).0.reason == .connectionTimeout)
        #expect(try await pair.peripheral.expectNothing("LE Long Term Key Request", for: .milliseconds(1), where: Self.isLongTermKeyRequest))
    }
}

private extension UInt16 {
    var littleEndianBytes: [UInt8] { [UInt8(self & 0xFF), UInt8(self >> 8)] }
}
