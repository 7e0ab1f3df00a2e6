import BluetoothCore
@testable import BluetoothHost
import Testing

@Suite("GATT server: malformed and unknown PDUs", .timeLimit(.minutes(1)))
struct GATTServerMalformedTests {
    @Test("An unknown request is Request Not Supported; an unknown command is ignored")
    func unknownOpcodes() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        raw.send([0x7F, 0x01, 0x02])  // Command Flag set: ignored.
        raw.send([0xFF])              // Signed and command: ignored.
        let answer = try await raw.request([0x3F, 0x01, 0x00])
        #expect(answer == .errorResponse(.init(requestOpcode: ATTOpcode(rawValue: 0x3F), handle: 0, code: .requestNotSupported)))
        #expect(raw.recorder.all.count == 1)
    }

    @Test("A request longer than the MTU is Invalid PDU, a command longer than the MTU is ignored, and neither is stored")
    func longerThanTheMTU() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(GATTServiceDefinition(uuid: TestDatabase.service, characteristics: [
            GATTCharacteristicDefinition(uuid: TestDatabase.short, properties: [.read, .write, .writeWithoutResponse],
                                         value: [1], maximumValueLength: 512),
        ]))
        let handle = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let raw = harness.rawBearer()  // MTU 23: at most 20 octets of value
        let long = Array(repeating: UInt8(7), count: 100)
        raw.send(.writeCommand(.init(handle: handle, value: long)))
        let answer = try await raw.request(.writeRequest(.init(handle: handle, value: long)))
        #expect(answer == .errorResponse(.init(requestOpcode: .writeRequest, handle: 0, code: .invalidPDU)))
        #expect(try await raw.request(.readRequest(.init(handle: handle))) == .readResponse(.init(value: [1])))
        // Within the MTU, the same write is taken.
        #expect(try await raw.request(.writeRequest(.init(handle: handle, value: Array(long.prefix(20))))) == .writeResponse(.init()))
    }

    @Test("A malformed request is Invalid PDU; a malformed command is ignored")
    func malformed() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        let requests: [[UInt8]] = [
            [0x0A, 0x01],                          // Read Request with half a handle
            [0x0A, 0x01, 0x00, 0x00],              // Read Request with a trailing octet
            [0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03],  // Read By Type with a 1-octet UUID
            [0x0E, 0x03, 0x00],                    // Read Multiple with one handle
            [0x18, 0x02],                          // Execute Write with reserved flags
            [0x02],                                // Exchange MTU without the MTU
            [0x16, 0x03],                          // Prepare Write without offset
        ]
        for bytes in requests {
            raw.send([0x52, 0x03])  // a malformed Write Command before each: never answered
            let answer = try await raw.request(bytes)
            #expect(answer == .errorResponse(.init(requestOpcode: ATTOpcode(rawValue: bytes[0]), handle: 0, code: .invalidPDU)),
                    "\(Hex.encode(bytes, separator: " "))")
        }
        #expect(raw.recorder.all.count == requests.count)
    }

    @Test("Empty PDUs, responses, notifications and stray confirmations sent to the server are ignored")
    func notForTheServer() async throws {
        let harness = await ServerHarness()
        let raw = harness.rawBearer()
        raw.send([])
        raw.send(.readResponse(.init(value: [1])))
        raw.send(.handleValueNotification(.init(handle: 3, value: [1])))
        raw.send(.handleValueConfirmation(.init()))
        raw.send([0x1E, 0x00])  // malformed confirmation
        #expect(try await raw.request(.readRequest(.init(handle: AttributeDatabase.appearanceHandle))) == .readResponse(.init(value: [0, 0])))
        #expect(raw.recorder.all.count == 1)
    }

    @Test("A Signed Write Command is ignored: no key can verify it")
    func signedWrite() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let short = try #require(published.characteristic(TestDatabase.short)).valueHandle
        let raw = harness.rawBearer()
        raw.send(.signedWriteCommand(.init(handle: short, value: [0xEE], signCounter: 1, mac: 2)))
        #expect(try await raw.request(.readRequest(.init(handle: short))) == .readResponse(.init(value: [1, 2, 3])))
    }

    @Test("The server keeps serving after a connection closes and its handle is reused")
    func handleReuse() async throws {
        let harness = await ServerHarness()
        let published = try await harness.server.addService(TestDatabase.definition)
        let configuration = try #require(published.characteristic(TestDatabase.streaming)?.clientConfigurationHandle)
        let raw = harness.rawBearer(handle: 0x0060)
        _ = try await raw.request(.exchangeMTURequest(.init(clientRxMTU: 200)))
        _ = try await raw.request(.writeRequest(.init(handle: configuration, value: [0x01, 0x00])))
        harness.disconnect(handle: 0x0060)
        // A new connection on the same handle starts from scratch.
        #expect(try await raw.request(.readRequest(.init(handle: configuration))) == .readResponse(.init(value: [0x00, 0x00])))
        #expect(await harness.server.mtu(connectionHandle: 0x0060) == 23)
    }
}
