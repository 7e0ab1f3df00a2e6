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
            return "ACL continuation on handle 0x\(String(handle, radix: 16)) without a start fragment"
        case let .incompletePDUReplaced(handle, received, expected):
            return "ACL start on handle 0x\(String(handle, radix: 16)) while a PDU had \(received) of \(expected) bytes"
        case let .overflow(handle, received, expected):
            return "ACL fragments on handle 0x\(String(handle, radix: 16)) carried \(received) bytes for a \(expected)-byte PDU"
        }
    }
}

/// Joins ACL fragments back into whole L2CAP PDUs, per connection. The L2CAP basic header's
/// length field (Core 6.0, Vol 3, Part A, 3.1) says when a PDU is complete.
public struct ACLReassembler: Sendable {
    private struct Partial: Sendable {
        var bytes: [UInt8]
        var expected: Int?

        /// 4 header bytes + payload length, once the header is in.
        mutating func updateExpected() {
            if expected == nil, bytes.count >= 2 {
                let length = 4 + (Int(bytes[0]) | Int(bytes[1]) << 8)
                expected = length
                bytes.reserveCapacity(length)
            }
        }
    }

    private var partials: [UInt16: Partial] = [:]

    public init() {}

    /// Adds a fragment; returns the whole PDU (basic header included) when this fragment
    /// completes one, `nil` while more fragments are needed.
    public mutating func append(_ packet: ACLDataPacket) throws(ACLReassemblyError) -> [UInt8]? {
        let handle = packet.connectionHandle
        var partial: Partial
        if packet.packetBoundary.startsPDU {
            if let previous = partials.removeValue(forKey: handle) {
                // Start the new PDU anyway, but report the loss.
                partials[handle] = Self.start(packet.data)
                throw .incompletePDUReplaced(connectionHandle: handle, received: previous.bytes.count, expected: previous.expected ?? 0)
            }
            partial = Self.start(packet.data)
        } else {
            guard var existing = partials.removeValue(forKey: handle) else {
                throw .unexpectedContinuation(connectionHandle: handle)
            }
            existing.bytes.append(contentsOf: packet.data)
            existing.updateExpected()
            partial = existing
        }
        guard let expected = partial.expected else {
            partials[handle] = partial
            return nil
        }
        if partial.bytes.count == expected { return partial.bytes }
        if partial.bytes.count > expected {
            throw .overflow(connectionHandle: handle, received: partial.bytes.count, expected: expected)
        }
        partials[handle] = partial
        return nil
    }

    /// Forgets a partial PDU, when its connection ends.
    public mutating func discard(connectionHandle: UInt16) {
        partials[connectionHandle] = nil
    }

    private static func start(_ data: [UInt8]) -> Partial {
        var partial = Partial(bytes: data, expected: nil)
        partial.updateExpected()
        return partial
    }
}
