import BluetoothCore
import BluetoothHCI
import BluetoothHost

/// What goes wrong with a request that a test singled out with
/// ``SimulatedDevice/failNextRequests(_:count:on:kinds:)``.
public enum SimulatedFailure: Sendable, Hashable, CustomStringConvertible {
    /// The request is answered with this ATT error (e.g. `.readNotPermitted`, or an
    /// application error `ATTErrorCode(rawValue: 0x80)`).
    case attError(ATTErrorCode)
    /// The link drops instead of an answer, as if the radio failed at that moment: on a
    /// virtual controller both sides get Disconnection Complete with `reason`; on another
    /// controller the peripheral disconnects.
    case dropLink(reason: HCIStatus)
    /// The answer comes this much later than it would have (on top of any response delay).
    case delay(Duration)

    /// The link drops with Connection Timeout (0x08), as when the radio is lost.
    public static let dropLink = SimulatedFailure.dropLink(reason: .connectionTimeout)

    public var description: String {
        switch self {
        case let .attError(code): return "answer \(code)"
        case let .dropLink(reason): return "drop the link (\(reason))"
        case let .delay(duration): return "answer \(duration) late"
        }
    }
}

/// Which requests a failure applies to.
public struct SimulatedRequestKinds: OptionSet, Sendable, Hashable {
    /// The bits: 1 read, 2 write.
    public let rawValue: UInt8
    /// Kinds from their bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Reads of characteristic values.
    public static let read = SimulatedRequestKinds(rawValue: 1)
    /// Writes of characteristic values (requests, commands and prepared writes).
    public static let write = SimulatedRequestKinds(rawValue: 2)
    /// Reads and writes.
    public static let all: SimulatedRequestKinds = [.read, .write]
}

/// The failures waiting for requests, in the order they were asked for: each request takes
/// the first one that matches its characteristic and kind. A plain value, no I/O.
struct FailurePlan: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        var failure: SimulatedFailure
        var remaining: Int
        /// `nil`: any characteristic.
        var characteristic: BluetoothUUID?
        var kinds: SimulatedRequestKinds
    }

    private(set) var entries: [Entry] = []

    /// Adds a failure for the next `count` matching requests (nothing when `count` < 1).
    mutating func add(_ failure: SimulatedFailure, count: Int, characteristic: BluetoothUUID?, kinds: SimulatedRequestKinds) {
        guard count > 0, !kinds.isEmpty else { return }
        entries.append(Entry(failure: failure, remaining: count, characteristic: characteristic, kinds: kinds))
    }

    /// The failure for a request, if one waits for it; uses it up.
    mutating func take(characteristic: BluetoothUUID, kind: SimulatedRequestKinds) -> SimulatedFailure? {
        guard let index = entries.firstIndex(where: { entry in
            (entry.characteristic == nil || entry.characteristic == characteristic) && entry.kinds.contains(kind)
        }) else { return nil }
        let failure = entries[index].failure
        entries[index].remaining -= 1
        if entries[index].remaining <= 0 { entries.remove(at: index) }
        return failure
    }

    /// How many requests still have a failure waiting.
    var pendingCount: Int { entries.reduce(0) { $0 + $1.remaining } }

    mutating func removeAll() { entries.removeAll() }
}
