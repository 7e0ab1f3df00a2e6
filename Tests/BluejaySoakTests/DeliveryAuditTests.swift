@testable import BluejaySoak
import Foundation
import Testing

/// The soak's delivery audit on logs made up for the purpose: what must pass passes, and a
/// value dropped on purpose, a duplicate, a stranger's value or a failed stream fails the run.
@Suite("Soak delivery audit")
struct DeliveryAuditTests {
    let t0 = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        t0 + .milliseconds(milliseconds)
    }

    /// Peripheral 0 sends `sequences` on notifications to `recipients`, one every 10 ms from 10 ms,
    /// each send taking 1 ms.
    func send(_ audit: DeliveryAudit, _ sequences: ClosedRange<UInt32>, to recipients: [Int]? = [0], peripheral: Int = 0) {
        for sequence in sequences {
            let began = at(10 * Int(sequence + 1))
            audit.sent(peripheral: peripheral, stream: .notifications, sequence: sequence, began: began, returned: began + .milliseconds(1),
                       recipients: recipients)
        }
    }

    /// Central 0 receives `sequences` from peripheral 0, each 2 ms after it was sent (in `listen`, if given).
    func receive(_ audit: DeliveryAudit, _ sequences: [UInt32], central: Int = 0, peripheral: Int = 0,
                 in listen: DeliveryAudit.ListenID? = nil) {
        for sequence in sequences {
            audit.received(central: central, peripheral: peripheral, stream: .notifications, sequence: sequence,
                           at: at(10 * Int(sequence + 1) + 2), listen: listen)
        }
    }

    /// A listen of `central` on notifications set up at `start` ms, ended at `end` ms (or open).
    @discardableResult
    func listen(_ audit: DeliveryAudit, central: Int = 0, from start: Int, to end: Int? = nil) -> DeliveryAudit.ListenID {
        let id = audit.listenRequested(central: central, stream: .notifications)
        audit.listenStarted(id, at: at(start))
        if let end { audit.listensEnded(central: central, stream: .notifications, at: at(end)) }
        return id
    }

    func report(_ totals: DeliveryAudit.Totals, seconds: Int = 1) -> SoakReport {
        var report = SoakReport(settings: SoakSettings(duration: .seconds(seconds), seed: 1, centrals: 1, peripherals: 1, timeScale: 10,
                                                       verbose: false))
        report.deliveries = totals
        return report
    }

    func invariant(_ report: SoakReport, _ prefix: String) -> SoakReport.Invariant? {
        report.invariants.first { $0.text.hasPrefix(prefix) }
    }

    @Test("Every value sent to a listening central arrives: all delivered, the delivery invariants pass")
    func wholeStream() throws {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        send(audit, 0...29)
        receive(audit, Array(0...29))
        audit.finish()
        let totals = audit.totals
        #expect(totals.sent == 30 && totals.received == 30 && totals.delivered == 30)
        #expect(totals.lost == 0 && totals.duplicated == 0 && totals.unexpected == 0 && totals.notRequired == 0)
        let report = report(totals)
        for prefix in ["at least", "every value sent", "no value duplicated", "no value received", "no listen's stream failed"] {
            #expect(try #require(invariant(report, prefix)).passed, "\(prefix)")
        }
    }

    @Test("A value dropped on purpose on a link that stayed up is lost, named, and fails the run")
    func droppedValueFails() throws {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        send(audit, 0...29)
        receive(audit, Array(0...29).filter { $0 != 17 })
        audit.finish()
        let totals = audit.totals
        #expect(totals.lost == 1 && totals.delivered == 29)
        #expect(totals.examples.contains { $0.contains("never received #17 of soak-peripheral-0's notifications") }, "\(totals.examples)")
        #expect(try #require(invariant(report(totals), "every value sent")).passed == false)
    }

    @Test("A loss while a link broke is explained; a silent break explains the sends until the other side hears of it; others explain nothing")
    func linkBreaks() {
        let explained = DeliveryAudit()
        listen(explained, from: 0)
        send(explained, 0...9)
        receive(explained, [0, 1, 2, 3, 4, 6, 7, 8, 9])
        explained.linkBroke(central: 0, peripheral: nil, at: at(63), reason: "link drop")
        explained.finish()
        #expect(explained.totals.lost == 0 && explained.totals.lostWithLinkBreak == 1)

        // The peripheral may go on sending until it hears of a silent break on the central's
        // side (at its supervision timeout), or of any break (as its host processes it).
        for (offset, silent, explains) in [(DeliveryAudit().settings.breakDetection - .milliseconds(5), true, true),
                                           (DeliveryAudit().settings.newsDelay - .milliseconds(5), false, true),
                                           (DeliveryAudit().settings.newsDelay + .milliseconds(5), false, false)] {
            let before = DeliveryAudit()
            listen(before, from: -3000)
            send(before, 0...9)
            receive(before, [0, 1, 2, 3, 4, 6, 7, 8, 9])
            before.linkBroke(central: nil, peripheral: nil, at: at(60) - offset, silent: silent, reason: "a break before the send")
            before.finish()
            #expect(before.totals.lostWithLinkBreak == (explains ? 1 : 0) && before.totals.lost == (explains ? 0 : 1),
                    "a \(silent ? "silent " : "")break \(offset) before the send")
        }

        // Listening from well before any of the breaks below.
        let unrelated = DeliveryAudit()
        listen(unrelated, from: -3000)
        send(unrelated, 0...9)
        receive(unrelated, [0, 1, 2, 3, 4, 6, 7, 8, 9])
        unrelated.linkBroke(central: 1, peripheral: nil, at: at(63), reason: "another central's link")
        unrelated.linkBroke(central: 0, peripheral: 1, at: at(63), reason: "another peripheral's link")
        unrelated.linkBroke(central: 0, peripheral: nil, at: at(61) + unrelated.settings.margin + .milliseconds(1), reason: "too late")
        unrelated.linkBroke(central: 0, peripheral: nil, at: at(60) - unrelated.settings.breakDetection - .milliseconds(1), silent: true,
                            reason: "too early")
        unrelated.finish()
        #expect(unrelated.totals.lost == 1 && unrelated.totals.lostWithLinkBreak == 0)

        // A listen set up after a break was set up on a newer link; and once the pair's next link
        // came up, the sender was done with the old one.
        let newer = DeliveryAudit()
        newer.linkBroke(central: 0, peripheral: nil, at: at(40), silent: true, reason: "before the listen")
        listen(newer, from: 45)
        send(newer, 0...9)
        receive(newer, [0, 1, 2, 3, 4, 6, 7, 8, 9])
        newer.linkBroke(central: 0, peripheral: nil, at: at(55), reason: "link drop")
        newer.linkUp(central: 0, peripheral: 0, at: at(58))
        newer.finish()
        #expect(newer.totals.lost == 1 && newer.totals.lostWithLinkBreak == 0)
    }

    @Test("Values sent before a listen was set up, after it ended, or in flight as it ended are not required")
    func outsideTheListen() {
        func audit(receiving received: [UInt32]) -> DeliveryAudit.Totals {
            let audit = DeliveryAudit()
            #expect(audit.settings.margin == .seconds(1))
            // Set up at 25 ms, after #0 and #1 went; ended at 2 s. #n is sent at 10(n+1) ms and
            // returns 1 ms later: due by 1 s after, so #2 ... #98 must arrive, #99 ... #149 are in
            // flight at the end or sent after it.
            listen(audit, from: 25, to: 2000)
            send(audit, 0...149)
            receive(audit, received)
            audit.finish()
            return audit.totals
        }
        let required = audit(receiving: Array(2...98))
        #expect(required.delivered == 97 && required.lost == 0 && required.notRequired == 53)
        let lastMissing = audit(receiving: Array(2...97))
        #expect(lastMissing.lost == 1, "#98 was due before the end")
    }

    @Test("In a listen shorter than the margin, a value missing before one that arrived in the same listen is lost")
    func shortListen() {
        func audit(receivingIn choose: (DeliveryAudit, DeliveryAudit.ListenID) -> DeliveryAudit.ListenID?) -> DeliveryAudit.Totals {
            let audit = DeliveryAudit()
            // #0 ... #9 go from 10 to 101 ms; the listen lasts from 5 to 120 ms.
            let id = listen(audit, from: 5, to: 120)
            send(audit, 0...9)
            receive(audit, [0, 1, 2, 3, 5, 6, 7], in: choose(audit, id))
            audit.finish()
            return audit.totals
        }
        let proven = audit { _, id in id }
        #expect(proven.lost == 1 && proven.delivered == 7, "#5 came to the same listen after #4 was due")
        #expect(proven.notRequired == 2, "#8 and #9 were in flight when the listen ended")
        // Without knowing which listen got #5, only the margin decides: #4 was in flight at the end.
        let unproven = audit { _, _ in nil }
        #expect(unproven.lost == 0 && unproven.notRequired == 3)
        // A later value that came to another listen, set up after #4 was sent, proves nothing.
        let other = audit { audit, _ in
            audit.listensEnded(central: 0, stream: .notifications, at: at(45))
            let next = audit.listenRequested(central: 0, stream: .notifications)
            audit.listenStarted(next, at: at(55))
            audit.listensEnded(central: 0, stream: .notifications, at: at(120))
            return next
        }
        #expect(other.lost == 0 && other.notRequired == 3)
    }

    @Test("An injected ACL delay stretches the time a value may take before a listen's end")
    func delays() {
        func audit(delayed: Bool) -> DeliveryAudit.Totals {
            let audit = DeliveryAudit()
            let due = 11 + Int(audit.settings.margin / .milliseconds(1))
            listen(audit, from: 0, to: due + 100)
            if delayed { audit.delayed(central: 0, from: at(5), to: at(5 + 300)) }
            send(audit, 0...0)
            audit.finish()
            return audit.totals
        }
        #expect(audit(delayed: false).lost == 1)
        #expect(audit(delayed: true).lost == 0 && audit(delayed: true).notRequired == 1)
    }

    @Test("A value received twice or after a higher one fails the run")
    func duplicates() throws {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        send(audit, 0...9)
        receive(audit, [0, 1, 2, 3, 3, 5, 4, 6, 7, 8, 9])
        audit.finish()
        let totals = audit.totals
        #expect(totals.duplicated == 2, "#3 again, #4 after #5")
        #expect(totals.lost == 1, "#4 was counted when it came late, so it never arrived in order")
        #expect(try #require(invariant(report(totals), "no value duplicated")).passed == false)
    }

    @Test("A value its peripheral never sent to that central fails the run; one from a send that failed part way does not")
    func unexpectedValues() throws {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        listen(audit, central: 1, from: 0)
        send(audit, 0...4, to: [1])         // to the other central only
        send(audit, 5...5, to: nil)         // failed part way: whoever got it
        send(audit, 6...7, to: [0, 1])
        receive(audit, [3, 5, 6, 7])
        receive(audit, [0, 1, 2, 3, 4, 5, 6, 7], central: 1)
        receive(audit, [8], peripheral: 0)  // never sent at all
        audit.finish()
        let totals = audit.totals
        #expect(totals.unexpected == 2, "#3, sent to central 1 only, and #8, never sent")
        #expect(totals.partialSends == 2)
        #expect(totals.delivered == 2 + 7 && totals.lost == 0)
        #expect(try #require(invariant(report(totals), "no value received")).passed == false)
    }

    @Test("A sweep settles only values older than the horizon, and keeps nothing of them")
    func sweeping() {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        send(audit, 0...9)
        receive(audit, Array(0...9))
        audit.sweep(now: at(51) + audit.settings.horizon)  // #0 ... #4 returned by 51 ms
        #expect(audit.totals.delivered == 5)
        audit.sweep(now: at(101) + audit.settings.horizon)
        #expect(audit.totals.delivered == 10)
        audit.finish()
        #expect(audit.totals.delivered == 10 && audit.totals.unexpected == 0)
    }

    @Test("A listen whose stream fails is counted, and fails the run unless its link failed; it is not required after its last value")
    func failedStream() throws {
        let audit = DeliveryAudit()
        let id = listen(audit, from: 0)
        send(audit, 0...9)
        receive(audit, [0, 1, 2])
        audit.received(central: 0, peripheral: 0, stream: .notifications, sequence: 3, at: at(42), listen: id)
        audit.streamEnded(id, how: "failed: deserializationFailed", failure: true)
        audit.finish()
        let totals = audit.totals
        #expect(totals.streamEnds == ["failed: deserializationFailed": 1])
        #expect(totals.delivered == 4 && totals.lost == 0 && totals.notRequired == 6)
        #expect(try #require(invariant(report(totals), "no listen's stream failed")).passed == false)

        // One that failed with its link is counted, and does not fail the run.
        let broken = DeliveryAudit()
        let other = listen(broken, from: 0)
        broken.streamEnded(other, how: "failed: disconnected", failure: false)
        broken.finish()
        #expect(broken.totals.streamEnds == ["failed: disconnected": 1] && broken.totals.streamFailures == 0)
        #expect(try #require(invariant(report(broken.totals), "no listen's stream failed")).passed)
    }

    @Test("A run that delivers fewer values than the minimum fails, however clean")
    func minimum() throws {
        let audit = DeliveryAudit()
        listen(audit, from: 0)
        send(audit, 0...3)
        receive(audit, Array(0...3))
        audit.finish()
        let report = report(audit.totals, seconds: 1)
        #expect(report.settings.minimumDeliveries == 5)
        #expect(try #require(invariant(report, "at least")).passed == false)

        // One more value is enough.
        let enough = DeliveryAudit()
        listen(enough, from: 0)
        send(enough, 0...4)
        receive(enough, Array(0...4))
        enough.finish()
        #expect(try #require(invariant(self.report(enough.totals, seconds: 1), "at least")).passed)
    }

    @Test("A numbered value carries its number and its peripheral; a central's address gives its index back")
    func values() throws {
        let bytes = NumberedValue.encode(0x0102_0304, peripheral: 2, padding: 3)
        #expect(bytes == [0x04, 0x03, 0x02, 0x01, 0x02, 0xA5, 0xA5, 0xA5])
        let value = try NumberedValue(bluetoothData: Data(bytes))
        #expect(value.sequence == 0x0102_0304 && value.peripheral == 2)
        #expect(throws: (any Error).self) { try NumberedValue(bluetoothData: Data([1, 2, 3, 4])) }
        for index in 0..<8 { #expect(SoakCentral.index(of: SoakCentral.address(index: index)) == index) }
        #expect(SoakCentral.index(of: .zero) == nil)
    }
}
