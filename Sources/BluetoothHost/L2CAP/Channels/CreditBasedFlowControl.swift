import BluetoothCore
import DequeModule

/// The flow control of one credit-based channel, in both directions, with no I/O (Core 6.0,
/// Vol 3, Part A, 3.4 and 10.1): K-frames in, SDUs out for the reader and credits to give back
/// as the reader takes them; SDUs in from writers, K-frames out as the peer's credits allow.
///
/// The receive buffer is bounded by the credits given: the peer holds at most ``creditTarget``
/// credits, and a credit is returned only when the K-frame it paid for has left the buffer
/// (its SDU was taken by the reader), so a slow reader stops the sender and nothing is dropped.
public struct CreditBasedFlowControl: Sendable {
    /// One K-frame payload waiting for a credit; `write` is set on the last frame of an SDU.
    public struct OutgoingFrame: Sendable, Equatable {
        public var payload: [UInt8]
        public var write: UInt64?
    }

    /// The largest SDU and K-frame payload we receive.
    public let mtu: Int
    public let mps: Int
    /// How many credits the peer holds when our reader has taken everything.
    public let creditTarget: Int
    /// The peer's limits, known once the channel is connected.
    public private(set) var peerMTU: Int
    public private(set) var peerMPS: Int

    /// Credits the peer still holds (K-frames it may send us).
    public private(set) var peerCredits: Int
    /// Credits we hold (K-frames we may send).
    public private(set) var sendCredits: Int
    /// SDUs complete and not yet taken, each with the K-frames (credits) it cost.
    private var received: Deque<(sdu: [UInt8], frames: Int)> = []
    /// The SDU being reassembled: its announced length, bytes so far, frames so far.
    private var partial: (length: Int, bytes: [UInt8], frames: Int)?
    /// Credits freed by the reader and not yet given back.
    private var creditsToReturn = 0
    private var outgoing: Deque<OutgoingFrame> = []
    /// Counters for ``L2CAPChannel/statistics``.
    public private(set) var statistics = L2CAPChannelStatistics()

    /// Credits are given back in batches of this many, unless the peer has run out.
    private var returnThreshold: Int { max(1, creditTarget / 2) }

    /// The largest credit count a peer may hold (Vol 3, Part A, 4.24).
    public static let maximumCredits = 65535

    public init(mtu: Int, mps: Int, initialCredits: Int, peerMTU: Int = 23, peerMPS: Int = 23, peerCredits: Int = 0) {
        self.mtu = mtu
        self.mps = mps
        creditTarget = initialCredits
        self.peerCredits = initialCredits
        self.peerMTU = peerMTU
        self.peerMPS = peerMPS
        sendCredits = peerCredits
    }

    /// The peer's side as its connection request or response gave it.
    public mutating func connect(peerMTU: Int, peerMPS: Int, credits: Int) {
        self.peerMTU = peerMTU
        self.peerMPS = peerMPS
        sendCredits = min(credits, Self.maximumCredits)
        fitQueuedFrames()
    }

    /// The peer's new MTU and MPS after a reconfiguration (Vol 3, Part A, 4.27).
    public mutating func reconfigure(peerMTU: Int, peerMPS: Int) {
        self.peerMTU = peerMTU
        self.peerMPS = peerMPS
        fitQueuedFrames()
    }

    /// Cuts queued K-frames longer than the peer's MPS (it may shrink in a reconfiguration,
    /// Vol 3, Part A, 4.27; frames not yet sent must fit the new one). An SDU's bytes may be
    /// cut anywhere as long as the first K-frame starts with the SDU Length (3.4.2), so a frame
    /// splits into consecutive pieces; its write marks the last.
    private mutating func fitQueuedFrames() {
        let mps = max(3, peerMPS)
        guard outgoing.contains(where: { $0.payload.count > mps }) else { return }
        var fitted: Deque<OutgoingFrame> = []
        for frame in outgoing {
            var offset = 0
            repeat {
                let end = min(frame.payload.count, offset + mps)
                fitted.append(OutgoingFrame(payload: Array(frame.payload[offset..<end]), write: end == frame.payload.count ? frame.write : nil))
                offset = end
            } while offset < frame.payload.count
        }
        outgoing = fitted
    }

    // MARK: Receiving

    /// SDUs waiting for the reader.
    public var receivedCount: Int { received.count }
    /// Bytes held for the reader and in the SDU being reassembled.
    public var bufferedBytes: Int { received.reduce(partial?.bytes.count ?? 0) { $0 + $1.sdu.count } }

    /// Takes one K-frame's information payload. Returns whether it completed an SDU. Throws
    /// when the peer broke the rules; the channel must then be disconnected (Vol 3, Part A,
    /// 3.4.3: an SDU over the MTU, a K-frame over the MPS; 10.1: a K-frame without credits).
    public mutating func receive(_ payload: ArraySlice<UInt8>) throws(L2CAPChannelError) -> Bool {
        guard peerCredits > 0 else { throw .protocolViolation(.frameWithoutCredits) }
        guard payload.count <= mps else { throw .protocolViolation(.frameLongerThanMPS(length: payload.count, mps: mps)) }
        peerCredits -= 1
        statistics.framesReceived += 1
        var current: (length: Int, bytes: [UInt8], frames: Int)
        if let partial {
            current = partial
            current.bytes += payload
            current.frames += 1
        } else {
            // The first K-frame of an SDU starts with the 2-octet SDU Length (Vol 3, Part A, 3.4.2).
            guard let length = ByteReader.uint16(in: payload, at: 0) else { throw .protocolViolation(.missingSDULength) }
            guard Int(length) <= mtu else { throw .protocolViolation(.sduLongerThanMTU(length: Int(length), mtu: mtu)) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(Int(length))
            bytes += payload.dropFirst(2)
            current = (Int(length), bytes, 1)
        }
        guard current.bytes.count <= current.length else {
            throw .protocolViolation(.sduOverrun(expected: current.length, received: current.bytes.count))
        }
        if current.bytes.count == current.length {
            partial = nil
            received.append((current.bytes, current.frames))
            statistics.sdusReceived += 1
            statistics.bytesReceived += current.length
            return true
        }
        partial = current
        // A peer that cuts an SDU into more K-frames than it has credits would wait forever
        // with the reader holding nothing to free: the SDU's frames so far are given back.
        if peerCredits == 0, received.isEmpty {
            creditsToReturn += current.frames
            current.frames = 0
            partial = current
        }
        return false
    }

    /// The oldest SDU received, if any; its credits become due to the peer.
    public mutating func takeSDU() -> [UInt8]? {
        guard let (sdu, frames) = received.popFirst() else { return nil }
        creditsToReturn += frames
        return sdu
    }

    /// Credits to give the peer now (in one Flow Control Credit Indication), if any are due:
    /// in batches of half the target, or at once when the peer has none left.
    public mutating func creditsToGive() -> UInt16? {
        guard creditsToReturn > 0, creditsToReturn >= returnThreshold || peerCredits == 0 else { return nil }
        let credits = min(creditsToReturn, Self.maximumCredits - peerCredits)
        guard credits > 0 else { return nil }
        creditsToReturn -= credits
        peerCredits += credits
        return UInt16(credits)
    }

    // MARK: Sending

    /// Cuts an SDU into K-frame payloads of at most the peer's MPS, the first with the SDU
    /// Length (Vol 3, Part A, 3.4.2), and queues them; `write` marks the last.
    public mutating func enqueue(_ sdu: [UInt8], write: UInt64) throws(L2CAPChannelError) {
        guard sdu.count <= peerMTU else { throw .sduTooLong(length: sdu.count, mtu: peerMTU) }
        for payload in Self.segment(sdu, mps: peerMPS) { outgoing.append(OutgoingFrame(payload: payload, write: nil)) }
        outgoing[outgoing.count - 1].write = write
        statistics.sdusSent += 1
        statistics.bytesSent += sdu.count
    }

    /// The K-frame payloads of one SDU for a peer MPS (at least 3, since the first frame holds
    /// the 2-octet SDU Length and one octet; the spec's minimum MPS is 23).
    public static func segment(_ sdu: [UInt8], mps: Int) -> [[UInt8]] {
        let mps = max(3, mps)
        var frames: [[UInt8]] = []
        var first: [UInt8] = [UInt8(truncatingIfNeeded: sdu.count), UInt8(truncatingIfNeeded: sdu.count >> 8)]
        let firstCount = min(sdu.count, mps - 2)
        first += sdu[0..<firstCount]
        frames.append(first)
        var offset = firstCount
        while offset < sdu.count {
            let end = min(sdu.count, offset + mps)
            frames.append(Array(sdu[offset..<end]))
            offset = end
        }
        return frames
    }

    /// Adds the peer's credits. Throws past 65535 (Vol 3, Part A, 4.24: the channel must be
    /// disconnected).
    public mutating func addSendCredits(_ credits: UInt16) throws(L2CAPChannelError) {
        guard sendCredits + Int(credits) <= Self.maximumCredits else { throw .protocolViolation(.creditOverflow) }
        sendCredits += Int(credits)
    }

    /// The frames the peer's credits allow now, in order, spending one credit each.
    public mutating func takeSendableFrames() -> [OutgoingFrame] {
        let count = min(sendCredits, outgoing.count)
        // Frames left waiting: the peer's credits ran out.
        if outgoing.count > count { statistics.creditStalls += 1 }
        guard count > 0 else { return [] }
        sendCredits -= count
        statistics.framesSent += count
        defer { outgoing.removeFirst(count) }
        return Array(outgoing.prefix(count))
    }

    /// Frames waiting for credits.
    public var queuedFrameCount: Int { outgoing.count }

    /// Drops every queued frame; returns the writes they belonged to.
    public mutating func dropOutgoing() -> [UInt64] {
        defer { outgoing.removeAll() }
        return outgoing.compactMap(\.write)
    }
}

/// What a channel moved (SDUs, K-frames, bytes of SDUs) and how often its sender ran out of
/// the peer's credits with frames waiting.
public struct L2CAPChannelStatistics: Sendable, Hashable {
    public var sdusSent = 0
    public var sdusReceived = 0
    public var bytesSent = 0
    public var bytesReceived = 0
    public var framesSent = 0
    public var framesReceived = 0
    /// Times frames were left waiting because the peer's credits were used up.
    public var creditStalls = 0
}
