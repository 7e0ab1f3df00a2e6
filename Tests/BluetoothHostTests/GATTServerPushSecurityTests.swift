import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Testing

/// A value whose reads need security is protected however it leaves the server (Core 6.0,
/// Vol 3, Part C, 10.3.1): subscribing needs what a read needs, and every notification and
/// indication is checked against the client's link as it is when it is sent. Tried as an
/// attacker would: a client that never paired, one whose key is too short or unauthenticated,
/// one whose bond was removed.
@Suite("GATT server: protected values pushed", .timeLimit(.minutes(1)))
struct GATTServerPushSecurityTests {
    static let service = BluetoothUUID(UInt16(0xAC00))
    static let open = BluetoothUUID(UInt16(0xAC01))
    static let encrypted = BluetoothUUID(UInt16(0xAC02))
    static let authenticated = BluetoothUUID(UInt16(0xAC03))
    static let longKey = BluetoothUUID(UInt16(0xAC04))
    static let authorized = BluetoothUUID(UInt16(0xAC05))
    /// Needs security level 4 to be read, so to be pushed.
    static let levelFour = BluetoothUUID(UInt16(0xAC06))

    static let peerWithKey = DeviceAddress(BluetoothAddress(rawValue: 0xF1_0000_0000_01), type: .random)
    static let peerWithoutKey = DeviceAddress(BluetoothAddress(rawValue: 0xF1_0000_0000_02), type: .random)

    static let unencrypted = LinkSecurity.unencrypted
    static let justWorks7 = LinkSecurity(isEncrypted: true, keySize: 7)
    static let justWorks16 = LinkSecurity(isEncrypted: true, keySize: 16)
    static let authenticated7 = LinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 7)
    static let authenticated16 = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16)
    static let bonded = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16, bondIdentity: peerWithKey)
    /// `bonded` once the host removed the bond with `peerWithKey`.
    static var bondRemoved: LinkSecurity {
        bonded.removingBond(peerWithKey) ?? bonded
    }

    static var definition: GATTServiceDefinition {
        let pushes: CharacteristicProperties = [.read, .notify, .indicate]
        return GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: open, properties: pushes, value: [0x01]),
            GATTCharacteristicDefinition(uuid: encrypted, properties: pushes, permissions: [.readEncryptionRequired], value: [0x02]),
            // Notify only, like a Heart Rate Measurement: no read property, its reads' requirements still protect it.
            GATTCharacteristicDefinition(uuid: authenticated, properties: [.notify], permissions: [.readAuthenticationRequired], value: [0x03]),
            GATTCharacteristicDefinition(uuid: longKey, properties: pushes, permissions: [.readEncryptionRequired], minimumKeySize: 16,
                                         value: [0x04]),
            GATTCharacteristicDefinition(uuid: authorized, properties: pushes, permissions: [.readAuthorizationRequired], value: [0x05]),
            GATTCharacteristicDefinition(uuid: levelFour, properties: pushes, permissions: [.readEncryptionRequired],
                                         requiresSecureConnections: true, value: [0x06]),
        ])
    }

    static func makeServer() async throws -> (ServerHarness, GATTPublishedService) {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(definition)
        await harness.server.setKeyAvailability { $0 == peerWithKey }
        return (harness, published)
    }

    static func characteristic(_ uuid: BluetoothUUID, in published: GATTPublishedService) throws -> GATTPublishedCharacteristic {
        try #require(published.characteristic(uuid))
    }

    /// Writes the client's Client Characteristic Configuration; returns the server's answer.
    static func subscribe(_ raw: RawBearer, to characteristic: GATTPublishedCharacteristic,
                          _ configuration: ClientCharacteristicConfiguration = .notification) async throws -> ATTPDU {
        let cccd = try #require(characteristic.clientConfigurationHandle)
        var value = ByteWriter(capacity: 2)
        value.write(configuration.rawValue)
        return try await raw.request(.writeRequest(.init(handle: cccd, value: value.bytes)))
    }

    /// The notifications and indications the server sent on a connection, by value handle.
    static func pushes(_ harness: ServerHarness, _ connection: UInt16) -> [ATTPDU] {
        harness.recorder(for: connection).all.compactMap { try? ATTPDU.decode($0) }.filter {
            switch $0 {
            case .handleValueNotification, .handleValueIndication: return true
            default: return false
            }
        }
    }

    // MARK: Subscribing

    /// One characteristic, one link: what a Client Characteristic Configuration write gets
    /// (`nil`: accepted).
    struct Case: Sendable, CustomStringConvertible {
        var characteristic: BluetoothUUID
        var security: LinkSecurity
        var peer: DeviceAddress
        var expected: ATTErrorCode?

        var description: String { "\(characteristic) on a link \(security)" }
    }

    static let cases: [Case] = [
        Case(characteristic: open, security: unencrypted, peer: peerWithoutKey, expected: nil),
        // Never paired: pair first. Bonded but not encrypted yet: encrypt.
        Case(characteristic: encrypted, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(characteristic: encrypted, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        Case(characteristic: encrypted, security: justWorks7, peer: peerWithoutKey, expected: nil),
        Case(characteristic: authenticated, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(characteristic: authenticated, security: justWorks16, peer: peerWithKey, expected: .insufficientAuthentication),
        Case(characteristic: authenticated, security: authenticated7, peer: peerWithoutKey, expected: nil),
        Case(characteristic: longKey, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        Case(characteristic: longKey, security: justWorks7, peer: peerWithKey, expected: .encryptionKeySizeTooShort),
        Case(characteristic: longKey, security: authenticated7, peer: peerWithKey, expected: .encryptionKeySizeTooShort),
        Case(characteristic: longKey, security: justWorks16, peer: peerWithoutKey, expected: nil),
        // The bond behind the link's key is gone: pair again.
        Case(characteristic: encrypted, security: bondRemoved, peer: peerWithoutKey, expected: .insufficientAuthentication),
        // No authorization handler: refused, as a read would be.
        Case(characteristic: authorized, security: authenticated16, peer: peerWithKey, expected: .insufficientAuthorization),
        // Level 4: an authenticated key from legacy pairing is not enough.
        Case(characteristic: levelFour, security: LinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16), peer: peerWithKey,
             expected: .insufficientAuthentication),
        Case(characteristic: levelFour, security: authenticated16, peer: peerWithKey, expected: nil),
    ]

    @Test("A CCCD write needs what a read of the value needs, answered with the read's error", arguments: [
        ClientCharacteristicConfiguration.notification, .indication,
    ])
    func subscriptionRefusals(configuration: ClientCharacteristicConfiguration) async throws {
        let (harness, published) = try await Self.makeServer()
        for (index, item) in Self.cases.enumerated() {
            if item.characteristic == Self.authenticated, configuration == .indication { continue }
            let connection = UInt16(0x0100 + index)
            harness.server.setSecurity(item.security, connectionHandle: connection)
            let raw = harness.rawBearer(handle: connection, peer: item.peer)
            let characteristic = try Self.characteristic(item.characteristic, in: published)
            let answer = try await Self.subscribe(raw, to: characteristic, configuration)
            let subscribers = await harness.server.subscriptions(forHandle: characteristic.valueHandle).map(\.connectionHandle)
            if let expected = item.expected {
                let cccd = try #require(characteristic.clientConfigurationHandle)
                #expect(answer == .errorResponse(ATTErrorResponse(requestOpcode: .writeRequest, handle: cccd, code: expected)), "\(item)")
                #expect(!subscribers.contains(connection), "\(item): no subscription")
            } else {
                #expect(answer == .writeResponse(.init()), "\(item)")
                #expect(subscribers.contains(connection), "\(item): subscribed")
            }
        }
    }

    @Test("A CCCD written with Prepare Write is refused when prepared, so Execute subscribes nobody")
    func preparedSubscriptionRefused() async throws {
        let (harness, published) = try await Self.makeServer()
        let characteristic = try Self.characteristic(Self.encrypted, in: published)
        let cccd = try #require(characteristic.clientConfigurationHandle)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peerWithoutKey)
        let refused = try await raw.expectError(.prepareWriteRequest(.init(handle: cccd, offset: 0, partValue: [0x01, 0x00])))
        #expect(refused.code == .insufficientAuthentication && refused.handle == cccd)
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(await harness.server.subscriptions(forHandle: characteristic.valueHandle).isEmpty)
    }

    @Test("Subscribing asks the application's authorization as for a read of the value; a no subscribes nobody")
    func subscriptionAuthorization() async throws {
        let (harness, published) = try await Self.makeServer()
        let characteristic = try Self.characteristic(Self.authorized, in: published)
        let refusing = GATTServerSecurityTests.Authorizer(answer: false)
        await harness.server.setAuthorizationHandler { await refusing.handle($0) }
        let raw = harness.rawBearer(handle: 0x0041, peer: Self.peerWithoutKey)
        let cccd = try #require(characteristic.clientConfigurationHandle)
        #expect(try await Self.subscribe(raw, to: characteristic)
            == .errorResponse(ATTErrorResponse(requestOpcode: .writeRequest, handle: cccd, code: .insufficientAuthorization)))
        #expect(refusing.requests.items == [GATTAuthorizationRequest(connectionHandle: 0x0041, peer: Self.peerWithoutKey,
                                                                     handle: characteristic.valueHandle, uuid: Self.authorized, access: .read)])
        #expect(await harness.server.subscriptions(forHandle: characteristic.valueHandle).isEmpty)
        let update = try await harness.server.updateValue([0x55], forHandle: characteristic.valueHandle)
        #expect(!update.hasSubscribers)
        #expect(Self.pushes(harness, 0x0041).isEmpty)

        let granting = GATTServerSecurityTests.Authorizer(answer: true)
        await harness.server.setAuthorizationHandler { await granting.handle($0) }
        #expect(try await Self.subscribe(raw, to: characteristic) == .writeResponse(.init()))
        #expect(granting.requests.items.map(\.access) == [.read])
        #expect(try await harness.server.updateValue([0x56], forHandle: characteristic.valueHandle).notified == [0x0041])
    }

    // MARK: Pushing

    @Test("Each push is checked against the link as it is when sent: a key that became too short gets nothing")
    func keyTooShortAtSendTime() async throws {
        let (harness, published) = try await Self.makeServer()
        let characteristic = try Self.characteristic(Self.longKey, in: published)
        let handle = characteristic.valueHandle
        let shrinking = harness.rawBearer(handle: 0x0050, peer: Self.peerWithKey)
        let steady = harness.rawBearer(handle: 0x0051, peer: Self.peerWithoutKey)
        harness.server.setSecurity(Self.justWorks16, connectionHandle: 0x0050)
        harness.server.setSecurity(Self.authenticated16, connectionHandle: 0x0051)
        #expect(try await Self.subscribe(shrinking, to: characteristic) == .writeResponse(.init()))
        #expect(try await Self.subscribe(steady, to: characteristic) == .writeResponse(.init()))

        // Paired again with a 7-octet key: the subscription stays, the values stop.
        harness.server.setSecurity(Self.justWorks7, connectionHandle: 0x0050)
        let update = try await harness.server.updateValue([0xA1], forHandle: handle)
        #expect(update.notified == [0x0051])
        #expect(update.withheld == [.init(connectionHandle: 0x0050, reason: .encryptionKeySizeTooShort(keySize: 7, minimum: 16))])
        #expect(!update.reachedAllSubscribers)
        #expect(Self.pushes(harness, 0x0050).isEmpty)
        #expect(Self.pushes(harness, 0x0051) == [.handleValueNotification(.init(handle: handle, value: [0xA1]))])
        await #expect(throws: GATTServerError.insufficientSecurity(connectionHandle: 0x0050, .encryptionKeySizeTooShort(keySize: 7, minimum: 16))) {
            try await harness.server.notify([0xA2], forHandle: handle, connectionHandle: 0x0050)
        }
        #expect(Self.pushes(harness, 0x0050).isEmpty)

        // A 16-octet key again: served again.
        harness.server.setSecurity(Self.justWorks16, connectionHandle: 0x0050)
        #expect(try await harness.server.updateValue([0xA3], forHandle: handle).notified == [0x0050, 0x0051])
        #expect(Self.pushes(harness, 0x0050) == [.handleValueNotification(.init(handle: handle, value: [0xA3]))])
    }

    @Test("A link that is not encrypted, or whose key lost its MITM protection, gets nothing; open values still go")
    func unencryptedAndUnauthenticatedAtSendTime() async throws {
        let (harness, published) = try await Self.makeServer()
        let encrypted = try Self.characteristic(Self.encrypted, in: published)
        let authenticated = try Self.characteristic(Self.authenticated, in: published)
        let open = try Self.characteristic(Self.open, in: published)
        let raw = harness.rawBearer(handle: 0x0052, peer: Self.peerWithKey)
        harness.server.setSecurity(Self.authenticated16, connectionHandle: 0x0052)
        for characteristic in [encrypted, authenticated, open] {
            #expect(try await Self.subscribe(raw, to: characteristic) == .writeResponse(.init()))
        }
        harness.server.setSecurity(Self.justWorks16, connectionHandle: 0x0052)
        #expect(try await harness.server.updateValue([0xB1], forHandle: authenticated.valueHandle).withheld
            == [.init(connectionHandle: 0x0052, reason: .insufficientAuthentication)])
        #expect(try await harness.server.updateValue([0xB2], forHandle: encrypted.valueHandle).notified == [0x0052])
        harness.server.setSecurity(Self.unencrypted, connectionHandle: 0x0052)
        #expect(try await harness.server.updateValue([0xB3], forHandle: encrypted.valueHandle).withheld
            == [.init(connectionHandle: 0x0052, reason: .insufficientEncryption)])
        #expect(try await harness.server.updateValue([0xB4], forHandle: open.valueHandle).notified == [0x0052])
        #expect(Self.pushes(harness, 0x0052) == [
            .handleValueNotification(.init(handle: encrypted.valueHandle, value: [0xB2])),
            .handleValueNotification(.init(handle: open.valueHandle, value: [0xB4])),
        ])
    }

    @Test("A level 4 value is withheld from a link whose key is authenticated but from legacy pairing, or short; sent at level 4")
    func levelFourAtSendTime() async throws {
        let (harness, published) = try await Self.makeServer()
        let levelFour = try Self.characteristic(Self.levelFour, in: published)
        let raw = harness.rawBearer(handle: 0x0053, peer: Self.peerWithKey)
        harness.server.setSecurity(Self.authenticated16, connectionHandle: 0x0053)
        #expect(try await Self.subscribe(raw, to: levelFour) == .writeResponse(.init()))
        harness.server.setSecurity(LinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16), connectionHandle: 0x0053)
        #expect(try await harness.server.updateValue([0xC1], forHandle: levelFour.valueHandle).withheld
            == [.init(connectionHandle: 0x0053, reason: .secureConnectionsRequired)])
        await #expect(throws: GATTServerError.insufficientSecurity(connectionHandle: 0x0053, .secureConnectionsRequired)) {
            try await harness.server.notify([0xC2], forHandle: levelFour.valueHandle, connectionHandle: 0x0053)
        }
        harness.server.setSecurity(LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 12),
                                   connectionHandle: 0x0053)
        #expect(try await harness.server.updateValue([0xC3], forHandle: levelFour.valueHandle).withheld
            == [.init(connectionHandle: 0x0053, reason: .encryptionKeySizeTooShort(keySize: 12, minimum: 16))])
        harness.server.setSecurity(Self.authenticated16, connectionHandle: 0x0053)
        #expect(try await harness.server.updateValue([0xC4], forHandle: levelFour.valueHandle).notified == [0x0053])
        #expect(await eventually { Self.pushes(harness, 0x0053) == [.handleValueNotification(.init(handle: levelFour.valueHandle, value: [0xC4]))] })
    }

    @Test("A bonded client whose bond is removed mid-connection gets nothing more, on a link still encrypted with the old key")
    func bondRemovedMidConnection() async throws {
        let (harness, published) = try await Self.makeServer()
        let characteristic = try Self.characteristic(Self.encrypted, in: published)
        let handle = characteristic.valueHandle
        let raw = harness.rawBearer(handle: 0x0053, peer: Self.peerWithKey)
        harness.server.setSecurity(Self.bonded, connectionHandle: 0x0053)
        #expect(try await Self.subscribe(raw, to: characteristic, .indication) == .writeResponse(.init()))
        #expect(try await harness.server.updateValue([0xC1], forHandle: handle).indicated == [0x0053])
        #expect(try await raw.recorder.next().map(ATTPDU.decode) == .handleValueIndication(.init(handle: handle, value: [0xC1])))
        raw.send(.handleValueConfirmation(.init()))

        harness.server.setSecurity(Self.bondRemoved, connectionHandle: 0x0053)
        await harness.server.setKeyAvailability { _ in false }
        let update = try await harness.server.updateValue([0xC2], forHandle: handle)
        #expect(update.withheld == [.init(connectionHandle: 0x0053, reason: .bondRemoved)])
        #expect(update.indicated.isEmpty && update.hasSubscribers)
        await #expect(throws: GATTServerError.insufficientSecurity(connectionHandle: 0x0053, .bondRemoved)) {
            try await harness.server.indicate([0xC3], forHandle: handle, connectionHandle: 0x0053)
        }
        // Nor may it read the value: pair again.
        #expect(try await raw.expectError(.readRequest(.init(handle: handle))).code == .insufficientAuthentication)
        #expect(Self.pushes(harness, 0x0053) == [.handleValueIndication(.init(handle: handle, value: [0xC1]))])
    }

    @Test("A queued indication is checked again when its turn comes: the link lost its security meanwhile, it is not sent")
    func queuedIndicationCheckedWhenSent() async throws {
        let (harness, published) = try await Self.makeServer()
        let characteristic = try Self.characteristic(Self.encrypted, in: published)
        let handle = characteristic.valueHandle
        let raw = harness.rawBearer(handle: 0x0054, peer: Self.peerWithKey)
        harness.server.setSecurity(Self.bonded, connectionHandle: 0x0054)
        #expect(try await Self.subscribe(raw, to: characteristic, .indication) == .writeResponse(.init()))
        #expect(try await harness.server.updateValue([0xD1], forHandle: handle).indicated == [0x0054])
        #expect(try await harness.server.updateValue([0xD2], forHandle: handle).indicated == [0x0054], "queued behind the first")
        let waiting = Task { try await harness.server.indicate([0xD3], forHandle: handle, connectionHandle: 0x0054) }
        #expect(await eventually { await harness.server.clients[0x0054]?.indications.count == 3 }, "the third indication queued")

        harness.server.setSecurity(Self.bondRemoved, connectionHandle: 0x0054)
        raw.send(.handleValueConfirmation(.init()))
        await #expect(throws: GATTServerError.insufficientSecurity(connectionHandle: 0x0054, .bondRemoved)) { try await waiting.value }
        #expect(await harness.server.clients[0x0054]?.indications.count == 0, "both queued indications dropped")
        #expect(Self.pushes(harness, 0x0054) == [.handleValueIndication(.init(handle: handle, value: [0xD1]))])
    }
}
