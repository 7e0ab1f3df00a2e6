/// The controller side of LE ACL flow control (Core 6.0, Vol 4, Part E, 4.1.1): a fixed
/// number of buffers for data from the host. A packet holds its buffer until the link layer
/// has sent all of it over the air (acknowledged in a connection event); only then is the
/// buffer free and reported to the host with Number Of Completed Packets. A plain value.
///
/// Invariant: per handle, the packets reported complete never exceed the packets taken, so
/// the host never gets back more credits than it spent.
struct ACLBufferPool: Sendable, Equatable {
    /// HC_Total_Num_LE_ACL_Data_Packets.
    let capacity: Int
    /// Buffers held per connection handle (taken, not yet reported complete).
    private(set) var held: [UInt16: Int] = [:]
    /// Buffers freed per handle and not yet reported to the host.
    private var completed: [UInt16: Int] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Buffers in use, including freed ones the host has not been told about yet: the host
    /// cannot count on them before the report.
    var inUse: Int { held.values.reduce(0, +) }
    var available: Int { capacity - inUse }

    /// Takes a buffer for a packet on `handle`; `false` when every buffer is in use (the
    /// packet is lost and the host is told with Data Buffer Overflow).
    mutating func take(handle: UInt16) -> Bool {
        guard available > 0 else { return false }
        held[handle, default: 0] += 1
        return true
    }

    /// `count` packets on `handle` went out over the air: their buffers are free, to be
    /// reported with ``takeCompleted(handle:)``.
    mutating func transmitted(handle: UInt16, count: Int) {
        guard count > 0 else { return }
        let outstanding = (held[handle] ?? 0) - (completed[handle] ?? 0)
        completed[handle, default: 0] += min(count, outstanding)
    }

    /// The freed buffers of `handle` not yet reported, which are now handed back.
    mutating func takeCompleted(handle: UInt16) -> Int {
        guard let count = completed.removeValue(forKey: handle), count > 0 else { return 0 }
        let remaining = (held[handle] ?? 0) - count
        held[handle] = remaining > 0 ? remaining : nil
        return count
    }

    /// The connection ended: its buffers are free without a report, since after Disconnection
    /// Complete the host considers them returned (Core 6.0, Vol 4, Part E, 7.7.5).
    mutating func connectionClosed(handle: UInt16) {
        held[handle] = nil
        completed[handle] = nil
    }

    /// HCI Reset: every buffer is free.
    mutating func reset() {
        held.removeAll()
        completed.removeAll()
    }
}
