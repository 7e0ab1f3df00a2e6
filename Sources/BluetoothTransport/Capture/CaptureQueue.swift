/// The bounded queue between the threads that see packets and the capture's writer thread:
/// a value, so that its rules (what is kept, what is dropped and counted) are tested without
/// threads. Producers append under a lock; the writer takes everything at once.
///
/// At the limit a packet is dropped and counted, never waited for: the capture must not slow
/// the pipeline it watches. The count goes into every later record (btsnoop's cumulative
/// drops field), so a reader of the file sees where packets are missing.
struct CaptureQueue: Sendable {
    /// One packet waiting to be written. The bytes are the transport's own slice (no copy).
    struct Entry: Sendable {
        var packet: H4Packet
        var received: Bool
        var timestamp: Int64
        /// Packets dropped before this one since the capture started.
        var dropsBefore: UInt32
    }

    /// The most packets waiting at once.
    let packetLimit: Int
    /// The most packet bytes waiting at once.
    let byteLimit: Int
    private(set) var entries: [Entry] = []
    private(set) var queuedBytes = 0
    /// Packets dropped so far because the queue was full.
    private(set) var dropped = 0
    /// Packets accepted so far.
    private(set) var accepted = 0

    init(packetLimit: Int, byteLimit: Int) {
        self.packetLimit = max(1, packetLimit)
        self.byteLimit = max(1, byteLimit)
    }

    /// Queues a packet, or drops and counts it when the queue is full. Returns whether it was kept.
    @discardableResult
    mutating func append(_ packet: H4Packet, received: Bool, timestamp: Int64) -> Bool {
        let size = packet.bytes.count + 1
        guard entries.count < packetLimit, queuedBytes + size <= byteLimit else {
            dropped += 1
            return false
        }
        entries.append(Entry(packet: packet, received: received, timestamp: timestamp, dropsBefore: UInt32(clamping: dropped)))
        queuedBytes += size
        accepted += 1
        return true
    }

    /// Everything waiting, oldest first; the queue is empty afterwards.
    mutating func takeAll() -> [Entry] {
        queuedBytes = 0
        defer { entries = [] }
        return entries
    }

    var isEmpty: Bool { entries.isEmpty }

    /// The records of `entries`, one buffer ready for one write.
    static func encode(_ entries: [Entry]) -> [UInt8] {
        var none: CaptureRedactor?
        return encode(entries, redactor: &none)
    }

    /// The records of `entries`, with the key octets a `redactor` finds written as zeros (in
    /// the buffer only: the packets are the transport's and stay as they are).
    static func encode(_ entries: [Entry], redactor: inout CaptureRedactor?) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(entries.reduce(0) { $0 + BTSnoop.recordHeaderSize + $1.packet.bytes.count + 1 })
        for entry in entries {
            let length = UInt32(entry.packet.bytes.count + 1)
            BTSnoop.Record.append(originalLength: length, flags: BTSnoop.Flags(indicator: entry.packet.indicator, received: entry.received),
                                  cumulativeDrops: entry.dropsBefore, timestamp: entry.timestamp,
                                  indicator: entry.packet.indicator.rawValue, data: entry.packet.bytes, to: &bytes)
            guard redactor != nil else { continue }
            if entry.dropsBefore != redactor?.dropsSeen {
                redactor?.packetsWereLost(total: entry.dropsBefore)
            }
            let packetStart = bytes.count - entry.packet.bytes.count
            for range in redactor?.secretRanges(in: entry.packet, received: entry.received) ?? [] {
                for index in range { bytes[packetStart + index] = 0 }
            }
        }
        return bytes
    }
}
