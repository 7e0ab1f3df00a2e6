import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Logging
import Synchronization
import Testing

/// The server checks every access to a value against the link's security and the
/// application's authorization (Core 6.0, Vol 3, Part F, 3.2.5 and 4; Part C, 10.3.1).
@Suite("GATT server security", .timeLimit(.minutes(1)))
struct GATTServerSecurityTests {
    static let service = BluetoothUUID(UInt16(0xAB00))
    static let open = BluetoothUUID(UInt16(0xAB01))
    static let encrypted = BluetoothUUID(UInt16(0xAB02))
    static let authenticated = BluetoothUUID(UInt16(0xAB03))
    static let longKey = BluetoothUUID(UInt16(0xAB04))
    static let authorized = BluetoothUUID(UInt16(0xAB05))
    /// Encryption and authorization: the application is asked only on an encrypted link.
    static let encryptedAuthorized = BluetoothUUID(UInt16(0xAB06))
    /// Readable by anyone, writes need authorization.
    static let writeAuthorized = BluetoothUUID(UInt16(0xAB07))
    /// Reads and writes need security level 4: LE Secure Connections, authenticated, 128-bit key.
    static let levelFour = BluetoothUUID(UInt16(0xAB08))
    /// Level 4 asked with `requiresSecureConnections` alone, no permission: it needs encryption all
    /// the same (it was served on any link).
    static let levelFourOnly = BluetoothUUID(UInt16(0xAB09))

    static let peerWithKey = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_01), type: .random)
    static let peerWithoutKey = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_02), type: .random)

    static let unencrypted = LinkSecurity.unencrypted
    static let justWorks7 = LinkSecurity(isEncrypted: true, keySize: 7)
    static let justWorks16 = LinkSecurity(isEncrypted: true, keySize: 16)
    static let authenticated7 = LinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 7)
    static let authenticated16 = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 16)
    /// Authenticated LE legacy pairing (Passkey Entry), 128-bit key: level 3, not 4.
    static let legacyAuthenticated16 = LinkSecurity(isEncrypted: true, isAuthenticated: true, keySize: 16)
    /// Authenticated LE Secure Connections with a key one octet short.
    static let authenticated15 = LinkSecurity(isEncrypted: true, isAuthenticated: true, isSecureConnections: true, keySize: 15)

    static var definition: GATTServiceDefinition {
        let properties: CharacteristicProperties = [.read, .write, .writeWithoutResponse]
        return GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: open, properties: properties, value: [0x01]),
            GATTCharacteristicDefinition(uuid: encrypted, properties: properties,
                                         permissions: [.readEncryptionRequired, .writeEncryptionRequired], value: [0x02]),
            GATTCharacteristicDefinition(uuid: authenticated, properties: properties,
                                         permissions: [.readAuthenticationRequired, .writeAuthenticationRequired], value: [0x03]),
            GATTCharacteristicDefinition(uuid: longKey, properties: properties, permissions: [.readEncryptionRequired, .writeEncryptionRequired],
                                         minimumKeySize: 16, value: [0x04]),
            GATTCharacteristicDefinition(uuid: authorized, properties: properties,
                                         permissions: [.readAuthorizationRequired, .writeAuthorizationRequired], value: [0x05]),
            GATTCharacteristicDefinition(uuid: encryptedAuthorized, properties: properties,
                                         permissions: [.readEncryptionRequired, .readAuthorizationRequired], value: [0x06]),
            GATTCharacteristicDefinition(uuid: writeAuthorized, properties: properties,
                                         permissions: [.readable, .writeAuthorizationRequired], value: [0x07]),
            GATTCharacteristicDefinition(uuid: levelFour, properties: properties, permissions: [.readEncryptionRequired, .writeEncryptionRequired],
                                         requiresSecureConnections: true, value: [0x08]),
            GATTCharacteristicDefinition(uuid: levelFourOnly, properties: properties, requiresSecureConnections: true, value: [0x09]),
        ])
    }

    /// A harness with the service published and a key for ``peerWithKey`` only.
    static func makeServer(clock: BluetoothClock = .continuous) async throws -> (ServerHarness, GATTPublishedService) {
        let harness = await ServerHarness(clock: clock)
        let published = try await harness.server.addService(definition)
        await harness.server.setKeyAvailability { $0 == peerWithKey }
        return (harness, published)
    }

    static func handle(_ uuid: BluetoothUUID, in published: GATTPublishedService) throws -> UInt16 {
        try #require(published.characteristic(uuid)).valueHandle
    }

    /// Every request that reads or writes a value, as it names one attribute.
    enum RequestKind: String, CaseIterable, Sendable {
        case read, readBlob, readMultiple, readMultipleVariable, readByType, write, prepareWrite

        func pdu(_ handle: UInt16, type: BluetoothUUID, openHandle: UInt16) -> ATTPDU {
            switch self {
            case .read: return .readRequest(.init(handle: handle))
            case .readBlob: return .readBlobRequest(.init(handle: handle, offset: 0))
            case .readMultiple: return .readMultipleRequest(.init(handles: [openHandle, handle]))
            case .readMultipleVariable: return .readMultipleVariableRequest(.init(handles: [openHandle, handle]))
            case .readByType: return .readByTypeRequest(.init(startingHandle: handle, endingHandle: handle, attributeType: type))
            case .write: return .writeRequest(.init(handle: handle, value: [0xEE]))
            case .prepareWrite: return .prepareWriteRequest(.init(handle: handle, offset: 0, partValue: [0xEE]))
            }
        }

        var isWrite: Bool { self == .write || self == .prepareWrite }
    }

    /// One attribute on one link: the answer expected (`nil`: served).
    struct Case: Sendable {
        var attribute: BluetoothUUID
        var security: LinkSecurity
        var peer: DeviceAddress
        var expected: ATTErrorCode?
    }

    static let cases: [Case] = [
        Case(attribute: open, security: unencrypted, peer: peerWithoutKey, expected: nil),
        // Not encrypted: pair first (no key), or encrypt with the key the server has.
        Case(attribute: encrypted, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(attribute: encrypted, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        Case(attribute: encrypted, security: justWorks7, peer: peerWithoutKey, expected: nil),
        Case(attribute: authenticated, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(attribute: authenticated, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        // Encrypted with an unauthenticated key: a new pairing with MITM protection is needed.
        Case(attribute: authenticated, security: justWorks16, peer: peerWithKey, expected: .insufficientAuthentication),
        Case(attribute: authenticated, security: authenticated7, peer: peerWithoutKey, expected: nil),
        Case(attribute: longKey, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        Case(attribute: longKey, security: justWorks7, peer: peerWithKey, expected: .encryptionKeySizeTooShort),
        Case(attribute: longKey, security: authenticated7, peer: peerWithKey, expected: .encryptionKeySizeTooShort),
        Case(attribute: longKey, security: justWorks16, peer: peerWithKey, expected: nil),
        // No authorization handler: refused, whatever the link.
        Case(attribute: authorized, security: authenticated16, peer: peerWithKey, expected: .insufficientAuthorization),
        // Security level 4 (Core 6.0, Vol 3, Part C, 10.2.1): encryption first, then an
        // authenticated LE Secure Connections key (a new pairing gives it), then 16 octets.
        Case(attribute: levelFour, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(attribute: levelFour, security: unencrypted, peer: peerWithKey, expected: .insufficientEncryption),
        Case(attribute: levelFour, security: justWorks16, peer: peerWithKey, expected: .insufficientAuthentication),
        Case(attribute: levelFour, security: legacyAuthenticated16, peer: peerWithKey, expected: .insufficientAuthentication),
        Case(attribute: levelFour, security: authenticated15, peer: peerWithKey, expected: .encryptionKeySizeTooShort),
        Case(attribute: levelFour, security: authenticated16, peer: peerWithoutKey, expected: nil),
        Case(attribute: levelFourOnly, security: unencrypted, peer: peerWithoutKey, expected: .insufficientAuthentication),
        Case(attribute: levelFourOnly, security: justWorks16, peer: peerWithKey, expected: .insufficientAuthentication),
        Case(attribute: levelFourOnly, security: authenticated16, peer: peerWithoutKey, expected: nil),
    ]

    @Test("Each refusal of each request that reads or writes a value", arguments: RequestKind.allCases)
    func refusals(kind: RequestKind) async throws {
        let (harness, published) = try await Self.makeServer()
        let openHandle = try Self.handle(Self.open, in: published)
        for (index, item) in Self.cases.enumerated() {
            let connection = UInt16(0x0100 + index)
            harness.server.setSecurity(item.security, connectionHandle: connection)
            let raw = harness.rawBearer(handle: connection, peer: item.peer)
            let handle = try Self.handle(item.attribute, in: published)
            let answer = try await raw.request(kind.pdu(handle, type: item.attribute, openHandle: openHandle))
            let label = "\(kind) of \(item.attribute) on a link \(item.security), peer \(item.peer == Self.peerWithKey ? "with" : "without") a key"
            if let expected = item.expected {
                #expect(answer == .errorResponse(ATTErrorResponse(requestOpcode: kind.pdu(0, type: item.attribute, openHandle: 0).opcode,
                                                                  handle: handle, code: expected)), "\(label)")
            } else {
                switch answer {
                case .errorResponse: Issue.record("\(label): refused with \(answer)")
                default: break
                }
            }
        }
    }

    @Test("A refused Write Command is dropped without an answer; on a link that qualifies it is stored")
    func writeCommand() async throws {
        let (harness, published) = try await Self.makeServer()
        let handle = try Self.handle(Self.longKey, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peerWithKey)
        for security in [Self.unencrypted, Self.justWorks7] {
            harness.server.setSecurity(security, connectionHandle: 0x0040)
            raw.send(.writeCommand(.init(handle: handle, value: [0xEE])))
        }
        harness.server.setSecurity(Self.justWorks16, connectionHandle: 0x0040)
        // Requests are served in order: this read comes after the commands.
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0x04])))
        #expect(harness.recorder(for: 0x0040).all.count == 1, "nothing answered the commands")
        raw.send(.writeCommand(.init(handle: handle, value: [0xEF])))
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0xEF])))
    }

    // MARK: Authorization

    /// The requests an authorization handler saw, and its answer.
    final class Authorizer: Sendable {
        let requests = AwaitableLog<GATTAuthorizationRequest>()
        let answer: Bool?
        let gate = TestGate()

        /// `nil`: never answers.
        init(answer: Bool?) { self.answer = answer }

        func handle(_ request: GATTAuthorizationRequest) async -> Bool {
            requests.append(request)
            guard let answer else {
                try? await gate.wait()
                return true
            }
            return answer
        }
    }

    @Test("Authorization: the handler is asked with the request's details, and its yes serves the request")
    func authorizationGranted() async throws {
        let (harness, published) = try await Self.makeServer()
        let authorizer = Authorizer(answer: true)
        await harness.server.setAuthorizationHandler { await authorizer.handle($0) }
        let handle = try Self.handle(Self.authorized, in: published)
        let raw = harness.rawBearer(handle: 0x0042, peer: Self.peerWithoutKey)
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0x05])))
        #expect(try await raw.request(.writeRequest(.init(handle: handle, value: [0x55]))) == .writeResponse(.init()))
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0x55])))
        let asked = authorizer.requests.items
        #expect(asked.map(\.access) == [.read, .write, .read])
        #expect(asked.allSatisfy {
            $0.connectionHandle == 0x0042 && $0.peer == Self.peerWithoutKey && $0.handle == handle && $0.uuid == Self.authorized
        })
    }

    @Test("Authorization: a no is Insufficient Authorization, and nothing is written")
    func authorizationRefused() async throws {
        let (harness, published) = try await Self.makeServer()
        let authorizer = Authorizer(answer: false)
        await harness.server.setAuthorizationHandler { await authorizer.handle($0) }
        let handle = try Self.handle(Self.writeAuthorized, in: published)
        let raw = harness.rawBearer(handle: 0x0042)
        #expect(try await raw.expectError(.writeRequest(.init(handle: handle, value: [0x77]))).code == .insufficientAuthorization)
        raw.send(.writeCommand(.init(handle: handle, value: [0x78])))
        // Reading needs no authorization here: the handler is not asked.
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0x07])))
        #expect(authorizer.requests.items.map(\.access) == [.write, .write])
    }

    @Test("Authorization: a handler that does not answer in time is Insufficient Authorization")
    func authorizationTimeout() async throws {
        let clock = ManualClock()
        let (harness, published) = try await Self.makeServer(clock: .manual(clock))
        let authorizer = Authorizer(answer: nil)
        await harness.server.setAuthorizationHandler { await authorizer.handle($0) }
        let handle = try Self.handle(Self.authorized, in: published)
        let raw = harness.rawBearer(handle: 0x0042)
        let answer = Task { try await raw.expectError(.readRequest(.init(handle: handle))) }
        try await authorizer.gate.waitForArrivals(1)
        try await clock.waitForSleepingTasks(1)
        clock.advance(by: GATTServerSettings().handlerTimeout)
        #expect(try await answer.value.code == .insufficientAuthorization)
    }

    @Test("Authorization comes last: permission and link security refuse first, without asking the application")
    func authorizationOrder() async throws {
        let (harness, published) = try await Self.makeServer()
        let authorizer = Authorizer(answer: true)
        await harness.server.setAuthorizationHandler { await authorizer.handle($0) }
        let both = try Self.handle(Self.encryptedAuthorized, in: published)
        let raw = harness.rawBearer(handle: 0x0043, peer: Self.peerWithoutKey)
        #expect(try await raw.expectError(.readRequest(.init(handle: both))).code == .insufficientAuthentication)
        // Its writes are not permitted at all.
        #expect(try await raw.expectError(.writeRequest(.init(handle: both, value: [1]))).code == .writeNotPermitted)
        #expect(authorizer.requests.items.isEmpty)
        harness.server.setSecurity(Self.justWorks7, connectionHandle: 0x0043)
        #expect(try await raw.request(.readRequest(.init(handle: both))) == .readResponse(.init(value: [0x06])))
        #expect(authorizer.requests.items.count == 1)
    }

    // MARK: Read By Type

    @Test("Read By Type stops at the first refused attribute: the error when it is the first, else what came before")
    func readByTypeStops() async throws {
        let type = BluetoothUUID(UInt16(0xAB10))
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
            GATTCharacteristicDefinition(uuid: type, properties: .read, value: [1]),
            GATTCharacteristicDefinition(uuid: type, properties: .read, permissions: .readEncryptionRequired, value: [2]),
            GATTCharacteristicDefinition(uuid: type, properties: .read, value: [3]),
        ]))
        let handles = published.characteristics.map(\.valueHandle)
        let range = published.handleRange
        let raw = harness.rawBearer(handle: 0x0044)
        let request = ATTPDU.readByTypeRequest(.init(startingHandle: range.lowerBound, endingHandle: range.upperBound, attributeType: type))
        #expect(try await raw.request(request)
            == .readByTypeResponse(try #require(ATTReadByTypeResponse(entries: [.init(handle: handles[0], value: [1])]))))
        let fromSecond = ATTPDU.readByTypeRequest(.init(startingHandle: handles[1], endingHandle: range.upperBound, attributeType: type))
        #expect(try await raw.request(fromSecond)
            == .errorResponse(ATTErrorResponse(requestOpcode: .readByTypeRequest, handle: handles[1], code: .insufficientAuthentication)))

        harness.server.setSecurity(Self.justWorks7, connectionHandle: 0x0044)
        let all = try #require(ATTReadByTypeResponse(entries: zip(handles, [1, 2, 3] as [UInt8]).map { .init(handle: $0, value: [$1]) }))
        #expect(try await raw.request(request) == .readByTypeResponse(all))
    }

    // MARK: Prepared writes

    @Test("A prepared write is refused when prepared, so Execute has nothing of it to write")
    func preparedWriteRefusedAtPrepare() async throws {
        let (harness, published) = try await Self.makeServer()
        let handle = try Self.handle(Self.encrypted, in: published)
        let raw = harness.rawBearer(handle: 0x0045, peer: Self.peerWithKey)
        let refused = try await raw.expectError(.prepareWriteRequest(.init(handle: handle, offset: 0, partValue: [0xEE])))
        #expect(refused.code == .insufficientEncryption && refused.handle == handle)
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        harness.server.setSecurity(Self.justWorks7, connectionHandle: 0x0045)
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0x02])))
    }

    @Test("Each Prepare Write asks for authorization; Execute does not ask again")
    func preparedWriteAuthorization() async throws {
        let (harness, published) = try await Self.makeServer()
        let authorizer = Authorizer(answer: true)
        await harness.server.setAuthorizationHandler { await authorizer.handle($0) }
        let handle = try Self.handle(Self.authorized, in: published)
        let raw = harness.rawBearer(handle: 0x0046)
        _ = try await raw.request(.prepareWriteRequest(.init(handle: handle, offset: 0, partValue: [0xA])))
        _ = try await raw.request(.prepareWriteRequest(.init(handle: handle, offset: 1, partValue: [0xB])))
        #expect(try await raw.request(.executeWriteRequest(.init(flags: .write))) == .executeWriteResponse(.init()))
        #expect(authorizer.requests.items.map(\.access) == [.write, .write])
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [0xA, 0xB])))
    }

    // MARK: Client Characteristic Configuration

    @Test("A Client Characteristic Configuration is always readable, and written only as its permissions allow")
    func clientConfiguration() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
            GATTCharacteristicDefinition(uuid: Self.open, properties: [.read, .notify],
                                         clientConfigurationPermissions: [.readable, .writeable, .writeEncryptionRequired]),
        ]))
        let characteristic = try #require(published.characteristic(Self.open))
        let cccd = try #require(characteristic.clientConfigurationHandle)
        let raw = harness.rawBearer(handle: 0x0047)
        #expect(try await raw.request(.readRequest(.init(handle: cccd))) == .readResponse(.init(value: [0, 0])))
        #expect(try await raw.expectError(.writeRequest(.init(handle: cccd, value: [1, 0]))).code == .insufficientAuthentication)
        #expect(await harness.server.subscriptions(forHandle: characteristic.valueHandle).isEmpty)
        harness.server.setSecurity(Self.justWorks7, connectionHandle: 0x0047)
        #expect(try await raw.request(.writeRequest(.init(handle: cccd, value: [1, 0]))) == .writeResponse(.init()))
        #expect(await harness.server.subscriptions(forHandle: characteristic.valueHandle).count == 1)
    }

    // MARK: Host connections

    @Test("On a Host connection the server checks the ATT bearer's security, and knows the peer from it")
    func bearerSecurity() async throws {
        let (harness, published) = try await Self.makeServer()
        let handle = try Self.handle(Self.encrypted, in: published)
        let server = harness.server
        // The server answers through the connection's bearer, the one ATT endpoint of both roles.
        let (sent, sender) = AsyncStream.makeStream(of: [UInt8].self)
        let bearer = ATTBearer(connectionHandle: 0x0048, peer: Self.peerWithKey, logger: Logger(label: "test.bearer"),
                               send: { pdu, _ in sender.yield(pdu) },
                               server: { pdu, bearer in server.receive(pdu, from: bearer) })
        var recorder = sent.makeAsyncIterator()
        let read = ATTPDU.readRequest(.init(handle: handle)).encode()
        // Security set for a wired client on the same handle does not count for a bearer.
        server.setSecurity(Self.justWorks16, connectionHandle: 0x0048)
        server.receive(read, from: bearer)
        #expect(try await recorder.next().map(ATTPDU.decode)
            == .errorResponse(ATTErrorResponse(requestOpcode: .readRequest, handle: handle, code: .insufficientEncryption)))
        bearer.setSecurity(Self.justWorks7)
        server.receive(read, from: bearer)
        #expect(try await recorder.next().map(ATTPDU.decode) == .readResponse(.init(value: [0x02])))
        #expect(harness.recorder(for: 0x0048).all.isEmpty, "nothing went around the bearer")
    }

    @Test("A minimum key size outside 7…16 is an invalid definition")
    func keySizeValidation() async throws {
        let harness = await ServerHarness()
        for size in [0, 6, 17] {
            await #expect(throws: GATTServerError.self) {
                try await harness.server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
                    GATTCharacteristicDefinition(uuid: Self.open, properties: .read, minimumKeySize: size),
                ]))
            }
            await #expect(throws: GATTServerError.self) {
                try await harness.server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
                    GATTCharacteristicDefinition(uuid: Self.open, properties: .read, descriptors: [
                        GATTDescriptorDefinition(uuid: BluetoothUUID(UInt16(0x2908)), minimumKeySize: size),
                    ]),
                ]))
            }
        }
    }
}
