import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Synchronization
import Testing

/// Signed Write Command in both roles, wired in memory (Core 6.0, Vol 3, Part F, 3.4.5.4;
/// Part G, 4.9.2; Part C, 10.2.2). The verifier here is the test's: it checks the MAC with
/// ``csrk`` and keeps the lowest SignCounter accepted, as the host's does with its bond store
/// (the host's own is tested on the virtual controller).
@Suite("Signed writes", .timeLimit(.minutes(1)))
struct GATTServerSignedWriteTests {
    static let service = BluetoothUUID(UInt16(0xAC00))
    /// Takes signed writes and nothing else.
    static let signed = BluetoothUUID(UInt16(0xAC01))
    /// Takes Write Commands, not signed writes.
    static let unsigned = BluetoothUUID(UInt16(0xAC02))
    /// Takes signed writes from an authenticated bond (or an authenticated link) only.
    static let signedAuthenticated = BluetoothUUID(UInt16(0xAC03))

    static let peer = DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_11), type: .random)
    static let csrk: UInt128 = 0x611B_64EB_FBCD_1FD3_72EC_9196_DF42_5E50

    static var definition: GATTServiceDefinition {
        GATTServiceDefinition(uuid: service, characteristics: [
            GATTCharacteristicDefinition(uuid: signed, properties: [.read, .authenticatedSignedWrites], value: [0x00]),
            GATTCharacteristicDefinition(uuid: unsigned, properties: [.read, .writeWithoutResponse], value: [0x00]),
            GATTCharacteristicDefinition(uuid: signedAuthenticated, properties: [.read, .authenticatedSignedWrites],
                                         permissions: [.readable, .writeAuthenticationRequired], value: [0x00]),
        ])
    }

    /// A verifier like the host's: the MAC with ``csrk``, then the counter.
    final class Verifier: Sendable {
        let calls = AwaitableLog<ATTSignedWriteCommand>()
        let lowest = Mutex<UInt32>(0)
        let security: LinkSecurity

        init(authenticated: Bool = false) {
            security = LinkSecurity(isEncrypted: true, isAuthenticated: authenticated, keySize: 16, isBonded: true)
        }

        func verify(_ peer: DeviceAddress, _ command: ATTSignedWriteCommand) -> SignedWriteVerdict {
            calls.append(command)
            guard peer == GATTServerSignedWriteTests.peer else { return .noKey }
            guard command.isSigned(by: GATTServerSignedWriteTests.csrk) else { return .badSignature }
            return lowest.withLock { lowest in
                guard command.signCounter >= lowest else { return .staleCounter(received: command.signCounter, lowestAccepted: lowest) }
                lowest = command.signCounter + 1
                return .accepted(security: security)
            }
        }
    }

    static func makeServer(verifier: Verifier?) async throws -> (ServerHarness, GATTPublishedService) {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(definition)
        if let verifier {
            await harness.server.setSignedWriteVerifier { peer, command in verifier.verify(peer, command) }
        }
        return (harness, published)
    }

    static func handle(_ uuid: BluetoothUUID, in published: GATTPublishedService) throws -> UInt16 {
        try #require(published.characteristic(uuid)).valueHandle
    }

    static func signedWrite(_ handle: UInt16, _ value: [UInt8], counter: UInt32, key: UInt128 = csrk) -> ATTPDU {
        .signedWriteCommand(ATTSignedWriteCommand(handle: handle, value: value, signedWith: SignedWriteKey(key: key, signCounter: counter)))
    }

    /// Waits until the commands sent before are served: requests are served in order.
    static func value(_ handle: UInt16, via raw: RawBearer) async throws -> [UInt8] {
        guard case let .readResponse(response) = try await raw.request(.readRequest(.init(handle: handle))) else {
            Issue.record("no Read Response")
            return []
        }
        return response.value
    }

    @Test("A signed write with the right MAC and a new counter is stored, never answered")
    func accepted() async throws {
        let verifier = Verifier()
        let (harness, published) = try await Self.makeServer(verifier: verifier)
        let handle = try Self.handle(Self.signed, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
        raw.send(Self.signedWrite(handle, [0x13, 0x37], counter: 0))
        #expect(try await Self.value(handle, via: raw) == [0x13, 0x37])
        raw.send(Self.signedWrite(handle, [0x14], counter: 5))
        #expect(try await Self.value(handle, via: raw) == [0x14])
        #expect(harness.recorder(for: 0x0040).all.count == 2, "only the reads were answered")
        #expect(await harness.server.rejectedSignedWriteCount == 0)
    }

    @Test("A bad MAC, a replayed or older counter, an unknown peer: dropped silently and counted")
    func rejected() async throws {
        let verifier = Verifier()
        let (harness, published) = try await Self.makeServer(verifier: verifier)
        let handle = try Self.handle(Self.signed, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
        raw.send(Self.signedWrite(handle, [0x01], counter: 3))
        #expect(try await Self.value(handle, via: raw) == [0x01])

        // The same PDU again (a replay), an older counter, a MAC made with another key, and
        // a PDU changed after it was signed.
        raw.send(Self.signedWrite(handle, [0x01], counter: 3))
        raw.send(Self.signedWrite(handle, [0x02], counter: 2))
        raw.send(Self.signedWrite(handle, [0x03], counter: 4, key: Self.csrk ^ 1))
        var tampered = ATTSignedWriteCommand(handle: handle, value: [0x04], signedWith: SignedWriteKey(key: Self.csrk, signCounter: 5))
        tampered.value = [0x05]
        raw.send(.signedWriteCommand(tampered))
        #expect(try await Self.value(handle, via: raw) == [0x01])
        #expect(await harness.server.rejectedSignedWriteCount == 4)

        // A peer with no key.
        let stranger = harness.rawBearer(handle: 0x0041, peer: DeviceAddress(BluetoothAddress(rawValue: 0xF0_0000_0000_99), type: .random))
        stranger.send(Self.signedWrite(handle, [0x06], counter: 9))
        #expect(try await Self.value(handle, via: stranger) == [0x01])
        #expect(await harness.server.rejectedSignedWriteCount == 5)
        #expect(harness.recorder(for: 0x0040).all.count == 2 && harness.recorder(for: 0x0041).all.count == 1, "only reads answered")
        // The counter of a refused write is not spent: 4 is still accepted.
        raw.send(Self.signedWrite(handle, [0x07], counter: 4))
        #expect(try await Self.value(handle, via: raw) == [0x07])
    }

    @Test("An attribute without Authenticated Signed Writes takes none, and its refusal spends no counter")
    func notPermitted() async throws {
        let verifier = Verifier()
        let (harness, published) = try await Self.makeServer(verifier: verifier)
        let handle = try Self.handle(Self.unsigned, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
        raw.send(Self.signedWrite(handle, [0x42], counter: 0))
        raw.send(Self.signedWrite(0x0F00, [0x42], counter: 0))
        #expect(try await Self.value(handle, via: raw) == [0x00])
        #expect(await harness.server.rejectedSignedWriteCount == 2)
        #expect(verifier.calls.items.isEmpty, "the signature was never checked")
    }

    @Test("Without a verifier (no keys) every signed write on an unencrypted link is dropped")
    func noVerifier() async throws {
        let (harness, published) = try await Self.makeServer(verifier: nil)
        let handle = try Self.handle(Self.signed, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
        raw.send(Self.signedWrite(handle, [0x42], counter: 0))
        #expect(try await Self.value(handle, via: raw) == [0x00])
        #expect(await harness.server.rejectedSignedWriteCount == 1)
    }

    @Test("The signature stands for the bond's security: MITM-protected writes need an authenticated bond")
    func signatureSecurity() async throws {
        for authenticated in [false, true] {
            let (harness, published) = try await Self.makeServer(verifier: Verifier(authenticated: authenticated))
            let handle = try Self.handle(Self.signedAuthenticated, in: published)
            let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
            raw.send(Self.signedWrite(handle, [0x42], counter: 0))
            #expect(try await Self.value(handle, via: raw) == (authenticated ? [0x42] : [0x00]))
        }
    }

    @Test("On an encrypted link the signature is not checked (Core 6.0, Vol 3, Part C, 10.2.2)")
    func encryptedLink() async throws {
        let verifier = Verifier()
        let (harness, published) = try await Self.makeServer(verifier: verifier)
        let handle = try Self.handle(Self.signed, in: published)
        let raw = harness.rawBearer(handle: 0x0040, peer: Self.peer)
        harness.server.setSecurity(LinkSecurity(isEncrypted: true, keySize: 16), connectionHandle: 0x0040)
        raw.send(Self.signedWrite(handle, [0x42], counter: 0, key: 0))
        #expect(try await Self.value(handle, via: raw) == [0x42])
        #expect(verifier.calls.items.isEmpty)
    }

    @Test("The client signs with the signer's key and counter; each write takes the next counter")
    func clientSigns() async throws {
        let verifier = Verifier()
        let (harness, published) = try await Self.makeServer(verifier: verifier)
        let server = harness.server
        let client = GATTClient { pdu, completion in
            server.receive(pdu, connectionHandle: 0x0050, peer: Self.peer)
            completion?(.success(()))
        }
        let characteristic = GATTCharacteristic(uuid: Self.signed, properties: [.read, .authenticatedSignedWrites],
                                                declarationHandle: try Self.handle(Self.signed, in: published) - 1,
                                                valueHandle: try Self.handle(Self.signed, in: published),
                                                endHandle: try Self.handle(Self.signed, in: published))
        // No signer: refused before anything is sent.
        await #expect(throws: HostError.self) { try await client.writeSigned([0x01], to: characteristic) }

        let next = Mutex<UInt32>(7)
        let peers = AwaitableLog<DeviceAddress>()
        client.setSignedWriteSigner { peer in
            peers.append(peer)
            return next.withLock { counter in
                defer { counter += 1 }
                return SignedWriteKey(key: Self.csrk, signCounter: counter)
            }
        }
        try await client.writeSigned([0x01], to: characteristic)
        try await client.writeSigned([0x02, 0x03], to: characteristic)
        let calls = try #require(await verifier.calls.wait(forCount: 2))
        #expect(calls.map(\.signCounter) == [7, 8])
        #expect(calls.map(\.value) == [[0x01], [0x02, 0x03]])
        #expect(await server.value(forHandle: characteristic.valueHandle) == [0x02, 0x03])
        #expect(await server.rejectedSignedWriteCount == 0)
        #expect(next.withLock { $0 } == 9)

        // A value over MTU - 15 and a characteristic without the property are refused.
        await #expect(throws: HostError.self) { try await client.writeSigned(Array(repeating: 0, count: 9), to: characteristic) }
        var plain = characteristic
        plain.properties = [.read, .writeWithoutResponse]
        await #expect(throws: HostError.self) { try await client.writeSigned([0x01], to: plain) }
        #expect(next.withLock { $0 } == 9, "no counter spent on a refused write")

        // On an encrypted link the client sends a plain Write Command and uses no counter.
        client.bearer.setSecurity(LinkSecurity(isEncrypted: true, keySize: 16))
        server.setSecurity(LinkSecurity(isEncrypted: true, keySize: 16), connectionHandle: 0x0050)
        try await client.writeSigned([0x04], to: characteristic)
        #expect(await eventually { await server.value(forHandle: characteristic.valueHandle) == [0x04] }, "the Write Command was stored")
        #expect(next.withLock { $0 } == 9)
        #expect(verifier.calls.items.count == 2)
    }
}
