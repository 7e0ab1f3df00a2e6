/// What a central may read back from one of its own characteristics on one peripheral.
///
/// Only this central writes there, and ATT keeps one bearer's requests in order, so a read
/// returns the value of the last write that reached the server. That is the last write that
/// succeeded, or a later one that failed or had no response (a write without response, a
/// write whose link dropped or whose answer came too late: it may or may not have been
/// applied). A long write is applied whole or not at all (Execute Write). After a read, what
/// it returned is the one candidate. A reboot of the peripheral brings back the initial value.
struct ValueExpectation: Sendable {
    /// Values a read may return.
    private(set) var candidates: [[UInt8]]
    /// The peripheral's reboot count when ``candidates`` were last pinned down.
    private(set) var generation: Int

    /// The most candidates kept: failed writes pile up while a peripheral is unreachable;
    /// the oldest are dropped (a read then proves which one won anyway).
    static let candidateLimit = 64

    init(generation: Int) {
        candidates = [SoakIdentifiers.initialValue]
        self.generation = generation
    }

    /// A write succeeded: only its value can be read now.
    mutating func written(_ value: [UInt8], generation: Int) {
        candidates = [value]
        self.generation = generation
    }

    /// A write was sent without a confirmation that it was applied.
    mutating func maybeWritten(_ value: [UInt8]) {
        candidates.append(value)
        if candidates.count > Self.candidateLimit { candidates.removeFirst(candidates.count - Self.candidateLimit) }
    }

    /// Checks a value read while the peripheral had rebooted `generation` times; it becomes
    /// the one candidate either way. Returns whether it was expected.
    mutating func read(_ value: [UInt8], generation: Int) -> Bool {
        let expected = candidates.contains(value) || (generation != self.generation && value == SoakIdentifiers.initialValue)
        candidates = [value]
        self.generation = generation
        return expected
    }

    var candidateCount: Int { candidates.count }
}
