import BluetoothCore
import BluetoothHCI
// The Service Changed characteristic the client found is internal state, which this target
// reads to aim indications at it (`@testable import`, allowed in the fuzz build: a debug
// build, where SwiftPM enables testing).
@testable import BluetoothHost
import FuzzSupport
import Synchronization

/// The ATT client: a ``GATTClient`` running the GATT procedures (MTU exchange, service,
/// include, characteristic and descriptor discovery, long read, long write, read multiple,
/// Service Changed) against a peer whose every answer comes from the fuzzer, and who pushes
/// notifications and indications in between. No procedure traps or hangs (a hang is reported
/// by libFuzzer's `-timeout`); what a procedure returns is consistent with the Core's rules
/// (Core 6.0, Vol 3, Part G, 4): handle ranges in order, characteristics and descriptors
/// inside their service and characteristic, values no longer than ATT can carry; a procedure
/// sends a bounded number of requests; a Service Changed indication drops exactly the cached
/// services it overlaps.
///
/// Input: the MTU the client proposes, then one answer per request: a control byte (answer
/// with raw bytes, with bytes under the expected response opcode, with an Error Response, or
/// push a notification or indication first) and a chunk. When the input runs out, every
/// request gets Attribute Not Found.

/// The fuzzed peer: answers each request of the client from the input, synchronously, as the
/// in-memory wiring of a client allows.
final class FuzzedPeer: Sendable {
    private struct State {
        var input: FuzzInput
        var client: GATTClient?
        var requests = 0
    }

    /// No procedure of the target needs more; a client that sends more loops.
    static let requestLimit = 2_000
    private let state: Mutex<State>

    init(_ input: FuzzInput) { state = Mutex(State(input: input)) }

    func attach(_ client: GATTClient) { state.withLock { $0.client = client } }
    func detach() { state.withLock { $0.client = nil } }

    /// Input for the target itself (values to write, to indicate).
    func take(_ read: (inout FuzzInput) -> [UInt8]) -> [UInt8] { state.withLock { read(&$0.input) } }

    /// What the client sent; the controller takes it at once.
    func clientSent(_ bytes: [UInt8], completion: HCIController.ACLCompletion?) {
        completion?(.success(()))
        let request: ATTPDU
        do {
            request = try ATTPDU.decode(bytes)
        } catch {
            fuzzFailure("the client sent an undecodable PDU \(fuzzHex(bytes)): \(error)")
        }
        guard let expected = request.expectedResponseOpcode else { return }
        let (client, plan) = state.withLock { state -> (GATTClient?, [[UInt8]]) in
            state.requests += 1
            fuzzCheck(state.requests <= Self.requestLimit, "the client sent more than \(Self.requestLimit) requests; last \(request)")
            return (state.client, Self.plan(for: request, expected: expected, from: &state.input))
        }
        guard let client else { return }
        fuzzTrace("client: \(request)")
        for pdu in plan {
            fuzzTrace("  peer: \(fuzzHex(pdu))")
            client.receive(pdu)
        }
        // An answer the client must ignore (another response, an Error Response for another
        // request) leaves the request waiting: end it, as a peer that goes on would.
        if let answer = plan.last, !Self.ends(request, expected: expected, answer) {
            client.receive(ATTPDU.errorResponse(.init(requestOpcode: request.opcode, handle: 0, code: .unlikelyError)).encode())
        }
    }

    /// The PDUs to send back for a request, the answer last.
    private static func plan(for request: ATTPDU, expected: ATTOpcode, from input: inout FuzzInput) -> [[UInt8]] {
        guard !input.isAtEnd else {
            return [ATTPDU.errorResponse(.init(requestOpcode: request.opcode, handle: 0, code: .attributeNotFound)).encode()]
        }
        let control = input.byte()
        var pushed: [[UInt8]] = []
        if control & 0x80 != 0 {
            // A notification or an indication first, under its opcode.
            pushed.append([control & 0x40 != 0 ? ATTOpcode.handleValueIndication.rawValue : ATTOpcode.handleValueNotification.rawValue]
                + input.chunk())
        }
        let answer: [UInt8]
        switch control & 0b11 {
        case 0: answer = input.chunk()
        case 1:
            answer = ATTPDU.errorResponse(.init(requestOpcode: request.opcode, handle: input.uint16(),
                                                code: ATTErrorCode(rawValue: input.byte()))).encode()
        default: answer = [expected.rawValue] + input.chunk()
        }
        return pushed + [answer]
    }

    /// Whether `answer` ends the outstanding `request` (Core 6.0, Vol 3, Part F, 3.3.2): its
    /// response, or an Error Response naming it, even a malformed one.
    private static func ends(_ request: ATTPDU, expected: ATTOpcode, _ answer: [UInt8]) -> Bool {
        guard let first = answer.first else { return false }
        guard let pdu = try? ATTPDU.decode(answer) else {
            return first == expected.rawValue || first == ATTOpcode.errorResponse.rawValue
        }
        if case let .errorResponse(error) = pdu { return error.requestOpcode == request.opcode }
        return pdu.opcode == expected
    }
}

/// Every procedure, in the order a connecting app runs them, with checks on what they return.
func runProcedures(_ client: GATTClient, _ peer: FuzzedPeer) async {
    let preferredMTU = max(ATTPDU.defaultLEMTU, UInt16(peer.take { [$0.byte(), $0.byte()] }.reduce(0) { $0 << 8 | Int($1) } % 600))
    _ = try? await client.exchangeMTU(preferredMTU)
    fuzzCheck((ATTPDU.defaultLEMTU...517).contains(client.mtu), "MTU \(client.mtu) after proposing \(preferredMTU)")

    let services = (try? await client.discoverAllPrimaryServices()) ?? []
    checkOrdered(services.map(\.handleRange), what: "primary services")
    for service in services.prefix(3) {
        let included = (try? await client.discoverIncludedServices(of: service)) ?? []
        for include in included {
            fuzzCheck(service.handleRange.contains(include.declarationHandle), "include \(include) outside \(service)")
            fuzzCheck(include.service.handleRange.lowerBound >= 1, "included service at handle 0: \(include)")
        }
        let characteristics = (try? await client.discoverCharacteristics(of: service)) ?? []
        checkOrdered(characteristics.map { $0.declarationHandle...$0.endHandle }, what: "characteristics of \(service)")
        for characteristic in characteristics {
            fuzzCheck(service.handleRange.contains(characteristic.declarationHandle) && service.handleRange.contains(characteristic.valueHandle)
                      && service.handleRange.contains(characteristic.endHandle), "\(characteristic) outside \(service)")
            fuzzCheck(characteristic.declarationHandle < characteristic.valueHandle && characteristic.valueHandle <= characteristic.endHandle,
                      "\(characteristic) has its handles out of order")
        }
        for characteristic in characteristics.prefix(3) {
            let descriptors = (try? await client.discoverDescriptors(of: characteristic)) ?? []
            for descriptor in descriptors {
                fuzzCheck(characteristic.descriptorRange?.contains(descriptor.handle) == true, "\(descriptor) outside \(characteristic)")
            }
            checkOrdered(descriptors.map { $0.handle...$0.handle }, what: "descriptors of \(characteristic)")
            if let value = try? await client.readLongValue(handle: characteristic.valueHandle) {
                fuzzCheck(value.count <= GATTClient.maximumValueLength + 517, "a long read of \(value.count) bytes")
            }
        }
    }
    _ = try? await client.discoverPrimaryServices(uuid: GATTAttributeType.gattService)
    if let values = try? await client.readMultipleVariable(handles: [0x0003, 0x0005, 0x0007]) {
        fuzzCheck(values.count <= 3, "Read Multiple Variable returned \(values.count) values for 3 handles")
    }
    _ = try? await client.writeLongValue(peer.take { $0.longChunk() }, handle: 0x0010)

    // Service Changed: enabled, then indicated with values from the input.
    guard (try? await client.enableServiceChangedIndications()) == true,
          let valueHandle = client.state.withLock({ $0.serviceChangedValueHandle }) else { return }
    for _ in 0..<4 {
        let value = peer.take { $0.chunk() }
        let before = client.cachedServices
        client.receive([ATTOpcode.handleValueIndication.rawValue, UInt8(truncatingIfNeeded: valueHandle), UInt8(valueHandle >> 8)] + value)
        let after = client.cachedServices
        guard value.count >= 4 else { continue }
        let start = UInt16(value[0]) | UInt16(value[1]) << 8, end = UInt16(value[2]) | UInt16(value[3]) << 8
        let expected = start <= end ? before.filter { !$0.handleRange.overlaps(start...end) } : before
        fuzzCheck(after == expected, "Service Changed \(Hex.format(start))-\(Hex.format(end)) left \(after) of \(before)")
    }
}

/// Ranges discovered one after another come in ascending order, without overlapping.
func checkOrdered(_ ranges: [ClosedRange<UInt16>], what: String) {
    for (first, second) in zip(ranges, ranges.dropFirst()) {
        fuzzCheck(first.upperBound < second.lowerBound, "\(what) overlap or go backwards: \(first) then \(second)")
    }
}

runFuzzer { input in
    let peer = FuzzedPeer(input)
    fuzzAwait {
        let client = GATTClient(transactionTimeout: .seconds(30), clock: .manual(ManualClock()), logger: fuzzLogger,
                                send: { pdu, completion in peer.clientSent(pdu, completion: completion) })
        peer.attach(client)
        await runProcedures(client, peer)
        peer.detach()
    }
}
