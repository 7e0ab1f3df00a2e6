/// One client's prepare queue (Core 6.0, Vol 3, Part F, 3.4.6): the parts of long or
/// reliable writes, held until an Execute Write Request writes or discards them. A plain
/// value with no I/O.
struct PreparedWriteQueue: Sendable, Equatable {
    struct Part: Sendable, Equatable {
        var handle: UInt16
        var offset: Int
        var value: [UInt8]
    }

    /// The most parts the queue holds; one more is answered with Prepare Queue Full.
    let capacity: Int
    private(set) var parts: [Part] = []

    init(capacity: Int) { self.capacity = capacity }

    var isEmpty: Bool { parts.isEmpty }

    /// Queues a part; `false` when the queue is full (Vol 3, Part F, 3.4.6.1).
    mutating func prepare(_ part: Part) -> Bool {
        guard parts.count < capacity else { return false }
        parts.append(part)
        return true
    }

    mutating func clear() { parts.removeAll() }

    /// A failed execution: the handle to blame and the error code.
    struct Failure: Error, Equatable {
        var handle: UInt16
        var code: ATTErrorCode
    }

    /// Assembles the values to write, one per handle in the order first prepared, from each
    /// attribute's current value: a part at offset `o` keeps the first `o` octets and replaces
    /// the rest. Offsets and lengths are checked here, not when the parts are prepared
    /// (Vol 3, Part F, 3.4.6.3): an offset past the value so far is Invalid Offset, a result
    /// longer than the attribute allows is Invalid Attribute Value Length.
    func assemble(currentValue: (UInt16) -> [UInt8], maximumLength: (UInt16) -> Int) -> Result<[(handle: UInt16, value: [UInt8])], Failure> {
        var order: [UInt16] = []
        var values: [UInt16: [UInt8]] = [:]
        for part in parts {
            var value = values[part.handle] ?? currentValue(part.handle)
            if values[part.handle] == nil { order.append(part.handle) }
            guard part.offset <= value.count else { return .failure(Failure(handle: part.handle, code: .invalidOffset)) }
            value = Array(value[..<part.offset]) + part.value
            guard value.count <= maximumLength(part.handle) else {
                return .failure(Failure(handle: part.handle, code: .invalidAttributeValueLength))
            }
            values[part.handle] = value
        }
        return .success(order.map { ($0, values[$0] ?? []) })
    }
}
