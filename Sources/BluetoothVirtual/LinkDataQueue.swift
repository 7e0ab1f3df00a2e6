import DequeModule

/// One direction of a connection's data channel: the ACL packets the sending host handed
/// to its controller, cut into LL data PDUs no longer than the connection's data length and
/// sent a few per connection event. A plain value; the connection event scheduler runs it.
///
/// Faults (``ACLFault``) attach to the next packets to go on the air: a lost packet is
/// retransmitted in a later event (the link layer acknowledges every PDU, Core 6.0, Vol 6,
/// Part B, 4.5.9), a delayed one waits, a dropped one vanishes although its sender counts it
/// as sent.
struct LinkDataQueue: Sendable {
    /// One LL data PDU as the receiving controller gets it.
    struct PDU: Sendable, Equatable {
        var data: [UInt8]
        /// LLID "start of an L2CAP message" (else a continuation fragment).
        var startsPDU: Bool
    }

    /// What one connection event carried in this direction.
    struct EventResult: Sendable, Equatable {
        var pdus: [PDU] = []
        /// ACL packets fully sent (or dropped by a fault): their buffers are free.
        var completedPackets = 0
        /// Of those, the packets a ``ACLFault/drop`` fault discarded.
        var droppedPackets = 0
    }

    private enum FaultState: Sendable {
        case failing(remaining: Int)
        case heldUntil(Duration)
        case dropping
    }

    private struct Packet: Sendable {
        var data: [UInt8]
        var startsPDU: Bool
        var sentOctets = 0
        /// Set at the packet's first attempt.
        var fault: FaultState?
        var attempted = false
    }

    private var packets: Deque<Packet> = []
    private var pendingFaults: Deque<ACLFault> = []

    init() {}

    /// ACL packets waiting or partly sent.
    var count: Int { packets.count }
    var isEmpty: Bool { packets.isEmpty }
    /// Faults not yet attached to a packet.
    var pendingFaultCount: Int { pendingFaults.count }

    mutating func enqueue(_ data: [UInt8], startsPDU: Bool) {
        packets.append(Packet(data: data, startsPDU: startsPDU))
    }

    /// Applies `fault` to the next `count` packets that go on the air.
    mutating func addFault(_ fault: ACLFault, count: Int) {
        for _ in 0..<max(0, count) { pendingFaults.append(fault) }
    }

    /// Forgets everything; returns how many packets were waiting.
    @discardableResult
    mutating func removeAll() -> Int {
        defer {
            packets.removeAll()
            pendingFaults.removeAll()
        }
        return packets.count
    }

    /// Sends up to `budget` PDUs of at most `maxOctets` each at simulated time `now`.
    mutating func runEvent(at now: Duration, budget: Int, maxOctets: Int) -> EventResult {
        var result = EventResult()
        var budget = budget
        let octets = max(1, maxOctets)
        while budget > 0, var head = packets.first {
            if !head.attempted {
                head.attempted = true
                head.fault = pendingFaults.popFirst().map { fault in
                    switch fault {
                    case let .lose(attempts): return .failing(remaining: max(1, attempts))
                    case let .delay(duration): return .heldUntil(now + duration)
                    case .drop: return .dropping
                    }
                }
            }
            switch head.fault {
            case .dropping?:
                packets.removeFirst()
                result.completedPackets += 1
                result.droppedPackets += 1
                budget -= 1
                continue
            case let .heldUntil(deadline)? where now < deadline:
                packets[0] = head
                return result
            case let .failing(remaining)? where remaining > 0:
                // Not acknowledged: the event closes and the PDU goes again next event.
                head.fault = .failing(remaining: remaining - 1)
                packets[0] = head
                return result
            default:
                break
            }
            let end = min(head.data.count, head.sentOctets + octets)
            result.pdus.append(PDU(data: Array(head.data[head.sentOctets..<end]), startsPDU: head.startsPDU && head.sentOctets == 0))
            head.sentOctets = end
            budget -= 1
            if head.sentOctets >= head.data.count {
                packets.removeFirst()
                result.completedPackets += 1
            } else {
                packets[0] = head
            }
        }
        return result
    }
}
