import BluetoothCore
import BluetoothHost
import Testing

// Helpers of the hostile-peer interop tests: the `hostile` command of
// `Tests/InteropTests/bumble/bluejay_hostile.py` and the raw PDUs the lying peers send.

extension BumbleRig {
    /// Runs one mode of the `hostile` command (see the rig's README, "Hostile peers").
    @discardableResult
    func hostile(_ mode: String, _ fields: [String: Any] = [:]) async throws -> RigEvent {
        var fields = fields
        fields["mode"] = mode
        return try await request("hostile", fields)
    }

    /// The next `times` requests with `opcode` (any request when `nil`) are answered with
    /// `pdus` instead of the peer's GATT server (never answered when empty; `-1`: every one).
    func answer(_ opcode: UInt8?, with pdus: [[UInt8]], times: Int = 1, serve: Bool = false) async throws {
        var fields: [String: Any] = ["pdus": Self.hexList(pdus), "times": times, "serve": serve]
        if let opcode { fields["opcode"] = Int(opcode) }
        try await hostile("answer", fields)
    }

    /// The peripheral drops the link (with `reason`) when the client's `occurrence`-th PDU
    /// with one of `opcodes` arrives, leaving it unanswered: a link drop during that procedure.
    func dropLink(on opcodes: [UInt8], occurrence: Int = 1, reason: UInt8 = 0x13) async throws {
        try await hostile("answer", ["opcode": opcodes.map { Int($0) }, "pdus": Self.hexList([]), "skip": occurrence - 1,
                                     "disconnect": Int(reason)])
    }

    /// Sends raw payloads on an L2CAP channel: through the peer's host and controller
    /// (`inject: false`), or straight from the controller of Bluejay's host (`inject: true`;
    /// with `pauseEvery`, the rig's other devices run after every that many, so that their
    /// PDUs arrive amid the flood). Returns how many PDUs the peer says it sent.
    @discardableResult
    func sendRaw(_ pdus: [[UInt8]], cid: UInt16 = 4, count: Int = 1, inject: Bool = false, pauseEvery: Int = 0) async throws -> Int {
        let ack = try await hostile("send", ["pdus": Self.hexList(pdus), "cid": Int(cid), "count": count, "path": inject ? "inject" : "host",
                                             "pause_every": pauseEvery])
        guard let sent = ack.int("sent") else { throw RigError(message: "the peer did not say how many PDUs it sent: \(ack)", context: diagnostics) }
        return sent
    }

    /// PDUs as a JSON list of hex strings (also when empty, which `[UInt8]` would swallow).
    private static func hexList(_ pdus: [[UInt8]]) -> RigJSON {
        .array(pdus.map { .string(Hex.encode($0)) })
    }

    /// Hands raw ACL packets to Bluejay's host: `(packet boundary flag, data)`.
    func sendACL(_ fragments: [(boundary: Int, data: [UInt8])]) async throws {
        try await hostile("acl", ["fragments": fragments.map { ["pb": $0.boundary, "data": $0.data] as [String: Any] }])
    }

    /// Sends `pdu` on `cid` and returns the next PDU Bluejay's host sends on that channel
    /// (`nil` when none comes within `timeoutMilliseconds`).
    func exchange(_ pdu: [UInt8], cid: UInt16 = 4, timeoutMilliseconds: Int = 3000) async throws -> [UInt8]? {
        try await hostile("request", ["pdu": pdu, "cid": Int(cid), "timeout_ms": timeoutMilliseconds]).bytes("response")
    }

    /// Records what Bluejay's host sends on `cid` from now on (as `l2cap` events with `events`).
    func record(cid: UInt16, events: Bool = true) async throws {
        try await hostile("record", ["cid": Int(cid), "events": events])
    }

    /// What was recorded on `cid` so far.
    func recorded(cid: UInt16, clear: Bool = false) async throws -> [[UInt8]] {
        let ack = try await hostile("recorded", ["cid": Int(cid), "clear": clear])
        return (ack["pdus"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(Hex.decode) }
    }

    /// Waits until at least `count` PDUs were recorded on `cid`; returns them all.
    func waitForRecorded(_ count: Int, cid: UInt16, timeout: Duration = .seconds(10)) async throws -> [[UInt8]] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let pdus = try await recorded(cid: cid)
            if pdus.count >= count { return pdus }
            guard ContinuousClock.now < deadline else {
                throw RigError(message: "\(count) PDUs on channel \(cid) did not come within \(timeout) (got \(pdus.count))",
                               context: diagnostics)
            }
            // Each poll is a round trip to the Python process: no fixed sleep needed.
        }
    }

    /// Waits for the `l2cap` event of channel `cid` whose PDU satisfies `predicate`.
    func waitForL2CAP(cid: UInt16, timeout: Duration = .seconds(10), _ predicate: @escaping @Sendable ([UInt8]) -> Bool) async throws -> [UInt8] {
        let event = try await waitForEvent(named: "l2cap", matching: { event in
            event.int("cid") == Int(cid) && event.bytes("pdu").map(predicate) == true
        }, timeout: timeout)
        return event.bytes("pdu") ?? []
    }
}

/// ATT PDUs as a lying peer writes them (Core 6.0, Vol 3, Part F, 3.4), little-endian.
enum RawATT {
    static func le(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    static func errorResponse(_ request: UInt8, handle: UInt16, code: UInt8) -> [UInt8] { [0x01, request] + le(handle) + [code] }
    static func readRequest(_ handle: UInt16) -> [UInt8] { [0x0A] + le(handle) }
    static func readResponse(_ value: [UInt8]) -> [UInt8] { [0x0B] + value }
    static func notification(_ handle: UInt16, _ value: [UInt8]) -> [UInt8] { [0x1B] + le(handle) + value }
    static func indication(_ handle: UInt16, _ value: [UInt8]) -> [UInt8] { [0x1D] + le(handle) + value }
    static let confirmation: [UInt8] = [0x1E]

    /// A Read By Type Response of characteristic declarations with 16-bit UUIDs:
    /// `(declaration handle, properties, value handle, UUID)`.
    static func characteristicDeclarations(_ entries: [(handle: UInt16, properties: UInt8, valueHandle: UInt16, uuid: UInt16)]) -> [UInt8] {
        [0x09, 7] + entries.flatMap { le($0.handle) + [$0.properties] + le($0.valueHandle) + le($0.uuid) }
    }

    /// A Read By Group Type Response of primary services with 16-bit UUIDs.
    static func serviceGroups(_ entries: [(start: UInt16, end: UInt16, uuid: UInt16)]) -> [UInt8] {
        [0x11, 6] + entries.flatMap { le($0.start) + le($0.end) + le($0.uuid) }
    }

    /// An L2CAP basic frame on the ATT channel around `payload` (Vol 3, Part A, 3.1).
    static func frame(_ payload: [UInt8], cid: UInt16 = 4) -> [UInt8] { le(UInt16(payload.count)) + le(cid) + payload }
}

/// Expects `body` to throw ``HostError/protocolViolation(_:)``; returns its text.
@discardableResult
func expectProtocolViolation(_ what: String, sourceLocation: SourceLocation = #_sourceLocation,
                             _ body: () async throws -> Void) async -> String? {
    do {
        try await body()
        Issue.record("\(what): no error, expected a protocol violation", sourceLocation: sourceLocation)
    } catch let HostError.protocolViolation(text) {
        return text
    } catch {
        Issue.record("\(what): \(error), expected a protocol violation", sourceLocation: sourceLocation)
    }
    return nil
}

extension GATTClient {
    /// Subscribes to `characteristic` and records every value, in order.
    func record(_ characteristic: GATTCharacteristic) async throws -> (AwaitableLog<[UInt8]>, GATTNotificationSubscription) {
        let log = AwaitableLog<[UInt8]>()
        let subscription = try await subscribe(to: characteristic) { values in
            for value in values { log.append(Array(value.value)) }
        }
        return (log, subscription)
    }
}
