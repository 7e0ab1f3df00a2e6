import DequeModule
import Synchronization

/// Compares what each peripheral sent with what each central received, per link (central,
/// peripheral, numbered characteristic), with link breaks and listens accounted for.
///
/// The peripherals log each value they send: its number, when the send began and returned,
/// and the centrals the server took it for (``sent(peripheral:stream:sequence:began:returned:recipients:)``).
/// The centrals log each value they receive (``received(central:peripheral:stream:sequence:at:)``),
/// when each listen was set up and when it ended, and every link break (a disconnection, a
/// controller reset or Hardware Error, a peripheral's reboot) goes in too (``linkBroke(central:peripheral:at:reason:)``).
///
/// A sent value is settled ``Settings/horizon`` after its send returned (``sweep(now:)``), or at
/// ``finish()``:
/// - **delivered** when its central received it;
/// - else it was **required** when a listen of that central was set up before the send began
///   and was still there when the value was due, that is either
///   - when a later value of the same link arrived in that same listen (a link delivers in
///     order, so this one came first, to the same listener), or
///   - ``Settings/margin`` after the send returned (plus any ACL delay injected on that
///     central's links meanwhile);
///
///   otherwise it is **not required** (sent before the listen was set up, or in flight as it
///   ended: such a value may rightly be missed);
/// - a required value is **lost with a link break** when a break of that link was recorded
///   while it was in flight: from the send (``Settings/newsDelay`` before it, the time the
///   sender's host takes to hear of a disconnection) to the moment it was due. A link that breaks
///   drops what it holds. After a *silent* break (a controller reset or Hardware Error, a
///   reboot, a stack stopped) the side that did not break may go on sending until its
///   supervision timeout tells it, so such a break also explains the values sent up to
///   ``Settings/breakDetection`` after it;
/// - else it is **lost**, which fails the run.
///
/// On each link the numbers must arrive in increasing order: one at or below the last is
/// **duplicated** (or reordered). A value received that its peripheral never logged as sent to
/// that central is **unexpected**. Both fail the run. What a listen's stream reports instead of
/// values (errors, or an end nobody asked for) is counted by type, and that listen stops being
/// required from its last value on; an error that is not a link's failure fails the run.
///
/// Memory stays bounded: only the last ``Settings/horizon`` of values is kept. Thread-safe.
final class DeliveryAudit: Sendable {
    struct Settings: Sendable {
        /// How long a value may take from a send's return to the central's app on a link that
        /// stays up: the virtual link's connection interval is 1.5 ms at the soak's time scale;
        /// the rest is the machine being busy.
        var margin: Duration = .seconds(1)
        /// How long after a link broke in silence the other side may still send on it: a
        /// peripheral learns that a central's controller reset only at its supervision timeout
        /// (5 s of link time, 0.5 s at the soak's time scale), and the news travels through the host.
        var breakDetection: Duration = .seconds(2)
        /// How long after a disconnection both sides see at once (a link drop, one the app asks
        /// for) the sender's host may still take a value for that link.
        var newsDelay: Duration = .milliseconds(250)
        /// How long after a send returned its value is settled: by then it has arrived or never
        /// will, and any break that explains it has been recorded.
        var horizon: Duration = .seconds(10)
        /// How long the break, delay and listen records are kept for the values still to settle:
        /// a value settles ``horizon`` after its send returned, and a send waits at most 10 s
        /// for a full queue (`SimulatedDevice.queueDrainTimeout`), so no older record is asked.
        var recordLifetime: Duration = .seconds(30)
    }

    struct Totals: Sendable {
        /// Values the peripherals' servers took, counted once per central they were for.
        var sent = 0
        var received = 0
        var delivered = 0
        var notRequired = 0
        var lostWithLinkBreak = 0
        var lost = 0
        var duplicated = 0
        var unexpected = 0
        /// Values whose send failed part way (the recipients are unknown), received by some.
        var partialSends = 0
        var listens = 0
        /// The longest a delivered value took, from the start of its send to its arrival.
        var slowestDelivery: Duration = .zero
        /// Listens whose stream ended without the central ending it, by how (an error's type,
        /// or "ended").
        var streamEnds: [String: Int] = [:]
        /// Those that failed with an error no link failure explains.
        var streamFailures = 0
        var examples: [String] = []

    }

    struct ListenID: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    fileprivate struct LinkKey: Hashable {
        var central: Int
        var peripheral: Int
        var stream: NumberedStream
    }

    fileprivate struct StreamKey: Hashable {
        var peripheral: Int
        var stream: NumberedStream
    }

    fileprivate struct SentRecord {
        var sequence: UInt32
        var began: ContinuousClock.Instant
        var returned: ContinuousClock.Instant
        /// A bit per central index; nil: the send failed part way, recipients unknown.
        var recipients: UInt64?
    }

    fileprivate struct Listen {
        var id: ListenID
        var central: Int
        var stream: NumberedStream
        var start: ContinuousClock.Instant?
        var end: ContinuousClock.Instant?
        var lastValue: ContinuousClock.Instant?
    }

    fileprivate struct Break {
        var central: Int?
        var peripheral: Int?
        var at: ContinuousClock.Instant
        var silent: Bool
        var reason: String
    }

    /// A link came up (as the peripheral's host saw it).
    fileprivate struct LinkUp {
        var central: Int
        var peripheral: Int
        var at: ContinuousClock.Instant
    }

    fileprivate struct Delay {
        var central: Int
        var from: ContinuousClock.Instant
        var to: ContinuousClock.Instant
    }

    /// A value received, waiting for its send to be settled.
    fileprivate struct Arrival {
        var sequence: UInt32
        var at: ContinuousClock.Instant
        var listen: ListenID?
    }

    fileprivate struct State {
        var totals = Totals()
        var pending: [StreamKey: Deque<SentRecord>] = [:]
        var receivedValues: [LinkKey: Deque<Arrival>] = [:]
        var lastReceived: [LinkKey: UInt32] = [:]
        var listens: [Listen] = []
        var nextListen: UInt64 = 0
        var breaks: [Break] = []
        var linksUp: [LinkUp] = []
        var delays: [Delay] = []
    }

    let settings: Settings
    private let state = Mutex(State())

    init(settings: Settings = Settings()) {
        self.settings = settings
    }

    var totals: Totals { state.withLock { $0.totals } }

    // MARK: What the peripherals and centrals log

    /// A peripheral sent `sequence` on `stream`; the server took it for `recipients` (central
    /// indices), or for an unknown part of its subscribers when `recipients` is nil (the send
    /// failed part way).
    func sent(peripheral: Int, stream: NumberedStream, sequence: UInt32, began: ContinuousClock.Instant,
              returned: ContinuousClock.Instant, recipients: [Int]?) {
        let mask = recipients.map { $0.reduce(UInt64(0)) { $0 | 1 << UInt64($1) } }
        state.withLock { state in
            state.totals.sent += mask?.nonzeroBitCount ?? 0
            state.pending[StreamKey(peripheral: peripheral, stream: stream), default: []]
                .append(SentRecord(sequence: sequence, began: began, returned: returned, recipients: mask))
        }
    }

    /// A central's listen on `stream` received `sequence` from `peripheral` at `at`.
    func received(central: Int, peripheral: Int, stream: NumberedStream, sequence: UInt32, at: ContinuousClock.Instant,
                  listen: ListenID? = nil) {
        let key = LinkKey(central: central, peripheral: peripheral, stream: stream)
        state.withLock { state in
            state.totals.received += 1
            if let listen, let index = state.listens.firstIndex(where: { $0.id == listen }) { state.listens[index].lastValue = at }
            if let last = state.lastReceived[key], sequence <= last {
                state.totals.duplicated += 1
                state.example("\(centralName(central)) received #\(sequence) of \(peripheralName(peripheral))'s "
                    + "\(stream) after #\(last)")
                return
            }
            state.lastReceived[key] = sequence
            state.receivedValues[key, default: []].append(Arrival(sequence: sequence, at: at, listen: listen))
        }
    }

    /// A central is about to set up a listen on `stream`: its values count from ``listenStarted(_:at:)``.
    func listenRequested(central: Int, stream: NumberedStream) -> ListenID {
        state.withLock { state in
            state.nextListen += 1
            let id = ListenID(value: state.nextListen)
            state.listens.append(Listen(id: id, central: central, stream: stream))
            return id
        }
    }

    /// The listen is set up (the request returned): from now on it must get what is sent to it.
    func listenStarted(_ id: ListenID, at: ContinuousClock.Instant) {
        state.withLock { state in
            guard let index = state.listens.firstIndex(where: { $0.id == id }), state.listens[index].end == nil else { return }
            state.listens[index].start = at
            state.totals.listens += 1
        }
    }

    /// Every listen of `central` on `stream` (or on both, when nil) ends at `at`: the central
    /// ends it, replaces it, stops Bluejay or the run ends.
    func listensEnded(central: Int, stream: NumberedStream?, at: ContinuousClock.Instant) {
        state.withLock { state in
            for index in state.listens.indices where state.listens[index].central == central && state.listens[index].end == nil
                && (stream == nil || state.listens[index].stream == stream) {
                state.listens[index].end = at
            }
        }
    }

    /// A listen's stream ended without the central ending it (`how`: an error's type, or
    /// "ended"; `failure`: an error no link failure explains): counted, and the listen is
    /// required no more from its last value on (nobody knows when the stack let go of it).
    func streamEnded(_ id: ListenID, how: String, failure: Bool = false) {
        state.withLock { state in
            guard let index = state.listens.firstIndex(where: { $0.id == id }), state.listens[index].end == nil else { return }
            let listen = state.listens[index]
            state.listens[index].end = listen.lastValue ?? listen.start ?? .now
            state.totals.streamEnds[how, default: 0] += 1
            if failure {
                state.totals.streamFailures += 1
                state.example("\(centralName(listen.central))'s listen on \(listen.stream) \(how)")
            }
        }
    }

    /// A link of `central` with `peripheral` broke at `at` (nil: every central, or every
    /// peripheral, of that side); `silent` when the other side learns it only at its
    /// supervision timeout (a controller reset or Hardware Error, a reboot, a stack stopped).
    func linkBroke(central: Int?, peripheral: Int?, at: ContinuousClock.Instant, silent: Bool = false, reason: String) {
        state.withLock { $0.breaks.append(Break(central: central, peripheral: peripheral, at: at, silent: silent, reason: reason)) }
    }

    /// A link of `central` with `peripheral` came up at `at`, as the peripheral's host saw it: its
    /// server sends nothing more on an older link of that pair, whose end it processed first.
    func linkUp(central: Int, peripheral: Int, at: ContinuousClock.Instant) {
        state.withLock { $0.linksUp.append(LinkUp(central: central, peripheral: peripheral, at: at)) }
    }

    /// ACL data on `central`'s links may wait from `from` to `to` (an injected delay).
    func delayed(central: Int, from: ContinuousClock.Instant, to: ContinuousClock.Instant) {
        state.withLock { $0.delays.append(Delay(central: central, from: from, to: to)) }
    }

    // MARK: Settling

    /// Settles the values whose send returned more than ``Settings/horizon`` before `now`.
    func sweep(now: ContinuousClock.Instant) {
        state.withLock { state in
            settle(&state) { now - $0.returned >= settings.horizon }
            let forgotten = now - settings.recordLifetime
            state.breaks.removeAll { $0.at < forgotten }
            state.linksUp.removeAll { $0.at < forgotten }
            state.delays.removeAll { $0.to < forgotten }
            state.listens.removeAll { ($0.end ?? .now) < forgotten }
        }
    }

    /// Settles everything (after the run: every listen has ended), and counts what was
    /// received and never sent.
    func finish() {
        state.withLock { state in
            settle(&state) { _ in true }
            for (key, values) in state.receivedValues where !values.isEmpty {
                state.totals.unexpected += values.count
                state.example("\(centralName(key.central)) received \(values.count) value(s) of "
                    + "\(peripheralName(key.peripheral))'s \(key.stream) it never sent there, from #\(values[values.startIndex].sequence)")
            }
            state.receivedValues = [:]
        }
    }

    private func settle(_ state: inout State, when due: (SentRecord) -> Bool) {
        for key in Array(state.pending.keys) {
            while let record = state.pending[key]?.first, due(record) {
                state.pending[key]?.removeFirst()
                settle(record, of: key, &state)
            }
        }
    }

    private func settle(_ record: SentRecord, of key: StreamKey, _ state: inout State) {
        var centrals = Set(state.receivedValues.keys.filter { $0.peripheral == key.peripheral && $0.stream == key.stream }.map(\.central))
        var mask = record.recipients ?? 0
        while mask != 0 {
            centrals.insert(mask.trailingZeroBitCount)
            mask &= mask - 1
        }
        for central in centrals.sorted() {
            let link = LinkKey(central: central, peripheral: key.peripheral, stream: key.stream)
            // Values on this link below this one were settled before it: left over, nobody sent them there.
            var arrival: Arrival?
            var next: Arrival?
            if var values = state.receivedValues[link] {
                while let first = values.first, first.sequence < record.sequence {
                    values.removeFirst()
                    state.totals.unexpected += 1
                    state.example("\(centralName(central)) received #\(first.sequence) of \(peripheralName(key.peripheral))'s "
                        + "\(key.stream), which was never sent there")
                }
                if values.first?.sequence == record.sequence { arrival = values.removeFirst() }
                next = values.first
                state.receivedValues[link] = values.isEmpty ? nil : values
            }
            let arrived = arrival != nil
            guard let recipients = record.recipients else {
                if arrived { state.totals.partialSends += 1 }
                continue
            }
            guard recipients & 1 << UInt64(central) != 0 else {
                if arrived {
                    state.totals.unexpected += 1
                    state.example("\(centralName(central)) received #\(record.sequence) of \(peripheralName(key.peripheral))'s "
                        + "\(key.stream), which its server did not send there")
                }
                continue
            }
            if let arrival {
                state.totals.delivered += 1
                state.totals.slowestDelivery = max(state.totals.slowestDelivery, arrival.at - record.began)
                continue
            }
            // The listen that had to get it: set up before the send, and there when it was due.
            let listens = state.listens.filter { $0.central == central && $0.stream == key.stream && $0.start.map { $0 <= record.began } == true }
            let due: ContinuousClock.Instant
            let requiring: Listen
            if let next, let listen = listens.first(where: { $0.id == next.listen }) {
                // A later value came to a listen set up before this one was sent: this one was due before it.
                due = next.at
                requiring = listen
            } else {
                let delay = state.delays.filter { $0.central == central && $0.from <= record.returned + settings.margin && $0.to >= record.began }
                    .reduce(Duration.zero) { $0 + ($1.to - $1.from) }
                due = record.returned + settings.margin + delay
                guard let listen = listens.first(where: { $0.end.map { $0 > due } ?? true }) else {
                    state.totals.notRequired += 1
                    continue
                }
                requiring = listen
            }
            if explainedByBreak(record, central: central, peripheral: key.peripheral, listen: requiring, due: due, state) {
                state.totals.lostWithLinkBreak += 1
            } else {
                state.totals.lost += 1
                state.example("\(centralName(central)) never received #\(record.sequence) of \(peripheralName(key.peripheral))'s "
                    + "\(key.stream), sent while it listened, with no link break recorded near it")
            }
        }
    }
}

extension DeliveryAudit {
    /// Whether a break of the link explains why `record` never reached `central`'s `listen`: a
    /// break while it was in flight (from its send to when it was `due`), or a break shortly
    /// before it was sent that the sender had not heard of yet (a silent one until the other
    /// side's supervision timeout; another only until the sender's host processed it, and never
    /// once that pair's next link came up). Only a break after the listen was set up: a listen
    /// set up after a break was set up on a newer link.
    fileprivate func explainedByBreak(_ record: SentRecord, central: Int, peripheral: Int, listen: Listen, due: ContinuousClock.Instant,
                                      _ state: State) -> Bool {
        state.breaks.contains { broke in
            guard broke.central == nil || broke.central == central, broke.peripheral == nil || broke.peripheral == peripheral,
                  broke.at <= due, let start = listen.start, broke.at >= start else { return false }
            if broke.at >= record.began { return true }
            if broke.silent { return record.began - broke.at <= settings.breakDetection }
            return record.began - broke.at <= settings.newsDelay
                && !state.linksUp.contains { $0.central == central && $0.peripheral == peripheral && $0.at > broke.at && $0.at < record.began }
        }
    }
}

extension DeliveryAudit.State {
    mutating func example(_ text: String) {
        if totals.examples.count < SoakStatistics.examplesKept { totals.examples.append(text) }
    }
}

/// How the report names the centrals and peripherals of a run.
private func centralName(_ index: Int) -> String { "soak-central-\(index)" }
private func peripheralName(_ index: Int) -> String { "soak-peripheral-\(index)" }
