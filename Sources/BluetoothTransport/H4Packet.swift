import BluetoothCore

/// The first byte of every packet on an H4 (UART-style) transport: what kind of HCI packet
/// follows (Core 6.0, Vol 4, Part A, 2). TCP bridges, Bumble and the Linux user channel
/// socket use the same framing.
public enum HCIPacketIndicator: UInt8, Sendable, CaseIterable, CustomStringConvertible {
    case command = 0x01
    case acl = 0x02
    case sco = 0x03
    case event = 0x04
    case iso = 0x05

    public var description: String {
        switch self {
        case .command: return "command"
        case .acl: return "ACL"
        case .sco: return "SCO"
        case .event: return "event"
        case .iso: return "ISO"
        }
    }

    /// Size of the packet header that follows the indicator, and where its length field is.
    var header: (size: Int, lengthOffset: Int, lengthSize: Int, lengthMask: Int) {
        switch self {
        case .command: return (3, 2, 1, 0xFF)
        case .acl: return (4, 2, 2, 0xFFFF)
        case .sco: return (3, 2, 1, 0xFF)
        case .event: return (2, 1, 1, 0xFF)
        // ISO_Data_Load_Length is 14 bits (Core 6.0, Vol 4, Part E, 5.4.5).
        case .iso: return (4, 2, 2, 0x3FFF)
        }
    }
}

/// One HCI packet as a transport carries it: the indicator and the packet itself
/// (header and parameters, without the indicator byte).
public struct H4Packet: Sendable, Equatable, CustomStringConvertible {
    public var indicator: HCIPacketIndicator
    public var bytes: [UInt8]

    public init(_ indicator: HCIPacketIndicator, _ bytes: [UInt8]) {
        self.indicator = indicator
        self.bytes = bytes
    }

    /// The indicator followed by the packet, as written to a byte stream.
    public var framed: [UInt8] { [indicator.rawValue] + bytes }

    public var description: String { "\(indicator) \(Hex.encode(bytes, separator: " "))" }

    /// Decodes one whole framed packet, as a datagram transport (the Linux HCI socket) delivers it.
    public init(framed: [UInt8]) throws(PacketDecodingError) {
        var deframer = H4Deframer()
        let packets = try deframer.append(framed)
        guard packets.count == 1, let packet = packets.first, deframer.bufferedByteCount == 0 else {
            throw .lengthMismatch(context: "H4 packet", declared: packets.first.map { $0.bytes.count + 1 } ?? 0, actual: framed.count)
        }
        self = packet
    }
}

/// Cuts a byte stream into H4 packets, however the bytes were split by the operating system.
public struct H4Deframer: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Bytes received but not yet part of a whole packet.
    public var bufferedByteCount: Int { buffer.count }

    /// Appends received bytes and returns every packet they complete, in order.
    /// Throws on an unknown packet indicator: the stream cannot be resynchronised after that.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(PacketDecodingError) -> [H4Packet] {
        buffer.append(contentsOf: bytes)
        var packets: [H4Packet] = []
        var start = 0
        while start < buffer.count {
            guard let indicator = HCIPacketIndicator(rawValue: buffer[start]) else {
                throw .unknownOpcode(context: "H4 packet indicator", opcode: UInt64(buffer[start]))
            }
            let header = indicator.header
            let available = buffer.count - start - 1
            guard available >= header.size else { break }
            let lengthStart = start + 1 + header.lengthOffset
            var length = Int(buffer[lengthStart])
            if header.lengthSize == 2 { length |= Int(buffer[lengthStart + 1]) << 8 }
            length &= header.lengthMask
            let total = header.size + length
            guard available >= total else { break }
            packets.append(H4Packet(indicator, Array(buffer[(start + 1)..<(start + 1 + total)])))
            start += 1 + total
        }
        if start > 0 { buffer.removeFirst(start) }
        return packets
    }
}
