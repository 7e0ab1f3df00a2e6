import BluetoothCore

/// Why an ACL fragment could not be reassembled; the partial PDU is dropped.
public enum ACLReassemblyError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A continuing fragment arrived with no PDU started on that connection.
    case unexpectedContinuation(connectionHandle: UInt16)
    /// A new PDU started before the previous one was complete.
    case incompletePDUReplaced(connectionHandle: UInt16, received: Int, expected: Int)
    /// A fragment carried more bytes than the L2CAP length announced.
    case overflow(connectionHandle: UInt16, received: Int, expected: Int)

    public var description: String {
        switch self {
        case let .unexpectedContinuation(handle):
            return "ACL continuation on handle \(Hex.format(handle)) without a start fragment"
        case let .incompletePDUReplaced(handle, received, expected):
            return "ACL start on handle \(Hex.format(handle)) while a PDU had \(received) of \(expected) bytes"
        case let .overflow(handle, received, expected):
            return "ACL fragments on handle \(Hex.format(handle)) carried \(received) bytes for a \(expected)-byte PDU"
        }
    }
}

/// Joins ACL fragments back into whole L2CAP PDUs, per connection. The L2CAP basic header's
/// length field (Core 6.0, Vol 3, Part A, 3.1) says when a PDU is complete.
///
/// A PDU that arrives in one fragment (the common case) is returned as that fragment's slice,
/// without a copy; only fragmented PDUs are assembled in a buffer.
public struct ACLReassembler: Sendable {
    /// What one fragment produced: a whole PDU, and a partial PDU it made the reassembler drop.
    public struct Outcome: Sendable {
        public var pdu: ArraySlice<UInt8>?
        public var dropped: ACLReassemblyError?
    }

    private struct Partial: Sendable {
        var bytes: [UInt8]
        var expected: Int?

        /// 4 header bytes + payload length, once the header is in.
        mutating func updateExpected() {
            if expected == nil, let payloadLength = ByteReader.uint16(in: bytes[...], at: 0) {
                let length = 4 + Int(payloadLength)
                expected = length
                bytes.reserveCapacity(length)
            }
        }
    }

    private var partials: [UInt16: Partial] = [:]

    public init() {}

    /// Adds a fragment. A start fragment while a PDU is incomplete drops the incomplete one
    /// (reported in ``Outcome/dropped``) and still counts as a start, so one lost fragment
    /// costs one PDU, not the ones after it.
    public mutating func append(connectionHandle handle: UInt16, boundary: ACLPacketBoundary, data: ArraySlice<UInt8>) -> Outcome {
        var outcome = Outcome()
        if boundary.startsPDU {
            if let previous = partials.removeValue(forKey: handle) {
                outcome.dropped = .incompletePDUReplaced(connectionHandle: handle, received: previous.bytes.count, expected: previous.expected ?? 0)
            }
            // The whole PDU in one fragment: hand out the fragment itself.
            if data.count >= 4, let payloadLength = ByteReader.uint16(in: data, at: 0) {
                let expected = 4 + Int(payloadLength)
                if data.count == expected {
                    outcome.pdu = data
                    return outcome
                }
                if data.count > expected {
                    outcome.dropped = .overflow(connectionHandle: handle, received: data.count, expected: expected)
                    return outcome
                }
            }
            var partial = Partial(bytes: Array(data), expected: nil)
            partial.updateExpected()
            partials[handle] = partial
            return outcome
        }
        guard var partial = partials.removeValue(forKey: handle) else {
            outcome.dropped = .unexpectedContinuation(connectionHandle: handle)
            return outcome
        }
        partial.bytes.append(contentsOf: data)
        partial.updateExpected()
        guard let expected = partial.expected else {
            partials[handle] = partial
            return outcome
        }
        if partial.bytes.count == expected {
            outcome.pdu = partial.bytes[...]
        } else if partial.bytes.count > expected {
            outcome.dropped = .overflow(connectionHandle: handle, received: partial.bytes.count, expected: expected)
        } else {
            partials[handle] = partial
        }
        return outcome
    }

    /// Adds a fragment; returns the whole PDU (basic header included) when this fragment
    /// completes one, `nil` while more fragments are needed; throws when it made the
    /// reassembler drop a partial PDU (a new start is kept even then).
    public mutating func append(_ packet: ACLDataPacket) throws(ACLReassemblyError) -> [UInt8]? {
        let outcome = append(connectionHandle: packet.connectionHandle, boundary: packet.packetBoundary, data: packet.data[...])
        if let dropped = outcome.dropped, outcome.pdu == nil { throw dropped }
        return outcome.pdu.map(Array.init)
    }

    /// Forgets a partial PDU, when its connection ends.
    public mutating func discard(connectionHandle: UInt16) {
        partials[connectionHandle] = nil
    }
}
