/// A value a server pushed (Handle Value Notification or Indication), as an ATT bearer hands
/// it over: the value is a slice of the transport's receive buffer, not a copy. Copy what you
/// keep (`Array(value)`, `Data(value)`): that is the only copy between the radio and the app.
public struct GATTValue: Sendable {
    public var handle: UInt16
    public var value: ArraySlice<UInt8>
    /// An indication (already confirmed) rather than a notification.
    public var isIndication: Bool

    public init(handle: UInt16, value: ArraySlice<UInt8>, isIndication: Bool) {
        self.handle = handle
        self.value = value
        self.isIndication = isIndication
    }
}

/// Where an ATT bearer sends notified values: `deliver` gets the values of one transport
/// batch, in arrival order, once per batch, on the transport's reader thread (it must not
/// block: hand the values on, e.g. to a queue or a stream); `finish` runs once, when the
/// subscription ends (`nil`) or the bearer closes (why).
final class NotificationSink: Sendable {
    let deliver: @Sendable ([GATTValue]) -> Void
    let finish: @Sendable (HostError?) -> Void

    init(deliver: @escaping @Sendable ([GATTValue]) -> Void, finish: @escaping @Sendable (HostError?) -> Void = { _ in }) {
        self.deliver = deliver
        self.finish = finish
    }
}

/// The values for each sink during one transport batch; ``flush()`` hands each sink its
/// values in one call once the batch is routed (one handoff per batch, not per value).
struct NotificationDeliveries {
    private var batches: [(sink: NotificationSink, values: [GATTValue])] = []

    init() {}

    var isEmpty: Bool { batches.isEmpty }

    mutating func add(_ value: GATTValue, to sink: NotificationSink) {
        // Usually one sink, or the one that took the previous value.
        if let last = batches.indices.last, batches[last].sink === sink {
            batches[last].values.append(value)
        } else if let index = batches.firstIndex(where: { $0.sink === sink }) {
            batches[index].values.append(value)
        } else {
            batches.append((sink, [value]))
        }
    }

    /// Calls each sink once with its values, in the order the sinks first got one.
    func flush() {
        for (sink, values) in batches { sink.deliver(values) }
    }

    /// Flushes what was added so far, and starts again empty.
    mutating func flushPending() {
        guard !batches.isEmpty else { return }
        flush()
        batches.removeAll(keepingCapacity: true)
    }
}
