import Bluejay
import Foundation
import Synchronization

/// A notification or indication of a soak peripheral: a 32-bit sequence number (little
/// endian) and padding, stamped with the instant it was made into a value. Bluejay makes
/// the values of an `async` listen on the transport's reader thread as each batch arrives,
/// so the stamp is the arrival time, taken before the link's disconnection (if any) can be
/// processed.
struct NumberedValue: Receivable, Sendable {
    let sequence: UInt32
    let receivedAt: ContinuousClock.Instant

    init(bluetoothData: Data) throws {
        sequence = try bluetoothData.extract(start: 0, length: 4)
        receivedAt = .now
    }

    /// What a peripheral sends: `sequence`, then `padding` bytes.
    static func encode(_ sequence: UInt32, padding: Int) -> [UInt8] {
        withUnsafeBytes(of: sequence.littleEndian, Array.init) + [UInt8](repeating: 0xA5, count: max(0, padding))
    }
}

/// Checks that no notification is lost or duplicated on a link that stays up.
///
/// A peripheral numbers the notifications of a characteristic 0, 1, 2, … and sends each to
/// every subscribed central. A central sees a run of consecutive numbers for as long as its
/// subscription lasts on one link: an *epoch*. An epoch starts with each listen (its first
/// value may have any number) and ends when the listen ends or the link drops. The drop is
/// known from the connection observer, which Bluejay calls before it starts reconnecting, so
/// every value of the old link arrived before that call and every value of the new link
/// after it: a value that arrived after a disconnection later than the previous value
/// starts a new run. Inside a run, a number more than one above the previous is that many
/// notifications lost; one at or below it is a duplicate (or reordering).
final class NotificationLedger: Sendable {
    struct Totals: Sendable {
        var received = 0
        var lost = 0
        var duplicated = 0
        var epochs = 0
        /// Runs that ended with a disconnection (the next value started a new run).
        var linkBreaks = 0
        var examples: [String] = []
    }

    private let totals = Mutex(Totals())

    var snapshot: Totals { totals.withLock { $0 } }

    /// A new epoch: one listen of one central.
    func beginEpoch(central: String, characteristic: String, disconnections: DisconnectionLog) -> NotificationEpoch {
        totals.withLock { $0.epochs += 1 }
        return NotificationEpoch(ledger: self, name: "\(central) on \(characteristic)", disconnections: disconnections)
    }

    fileprivate func record(received: Int = 0, lost: Int = 0, duplicated: Int = 0, linkBreaks: Int = 0, example: String? = nil) {
        totals.withLock { totals in
            totals.received += received
            totals.lost += lost
            totals.duplicated += duplicated
            totals.linkBreaks += linkBreaks
            if let example, totals.examples.count < SoakStatistics.examplesKept { totals.examples.append(example) }
        }
    }
}

/// When a central's links dropped, as its connection observer heard it.
final class DisconnectionLog: Sendable {
    /// How many instants are kept: an epoch only asks about the time since its previous
    /// value, a few connection intervals back.
    static let capacity = 64

    private let instants = Mutex<[ContinuousClock.Instant]>([])

    func record(_ instant: ContinuousClock.Instant = .now) {
        instants.withLock { instants in
            instants.append(instant)
            if instants.count > Self.capacity { instants.removeFirst(instants.count - Self.capacity) }
        }
    }

    /// Whether a disconnection was heard after `start` and no later than `end`.
    func contains(after start: ContinuousClock.Instant, through end: ContinuousClock.Instant) -> Bool {
        instants.withLock { $0.contains { $0 > start && $0 <= end } }
    }
}

/// The sequence check of one listen (see ``NotificationLedger``). Used by the one task that
/// consumes the listen's values.
final class NotificationEpoch: Sendable {
    private struct Last {
        var sequence: UInt32
        var receivedAt: ContinuousClock.Instant
    }

    private let ledger: NotificationLedger
    private let name: String
    private let disconnections: DisconnectionLog
    private let last = Mutex<Last?>(nil)

    fileprivate init(ledger: NotificationLedger, name: String, disconnections: DisconnectionLog) {
        self.ledger = ledger
        self.name = name
        self.disconnections = disconnections
    }

    func receive(_ value: NumberedValue) {
        let previous = last.withLock { last -> Last? in
            defer { last = Last(sequence: value.sequence, receivedAt: value.receivedAt) }
            return last
        }
        guard let previous else {
            ledger.record(received: 1)
            return
        }
        if disconnections.contains(after: previous.receivedAt, through: value.receivedAt) {
            ledger.record(received: 1, linkBreaks: 1)
            return
        }
        let expected = previous.sequence &+ 1
        if value.sequence == expected {
            ledger.record(received: 1)
        } else if value.sequence > expected {
            let missing = Int(value.sequence - expected)
            ledger.record(received: 1, lost: missing,
                          example: "\(name): \(missing) lost, #\(previous.sequence) then #\(value.sequence) on a link that stayed up")
        } else {
            ledger.record(received: 1, duplicated: 1,
                          example: "\(name): #\(value.sequence) after #\(previous.sequence) on a link that stayed up")
        }
    }
}
