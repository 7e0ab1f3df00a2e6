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
/// (header and parameters, without the indicator byte). The bytes are a slice: a transport
/// hands out views of its read buffer rather than a copy per packet.
public struct H4Packet: Sendable, Equatable, CustomStringConvertible {
    public var indicator: HCIPacketIndicator
    public var bytes: ArraySlice<UInt8>

    public init(_ indicator: HCIPacketIndicator, _ bytes: [UInt8]) {
        self.indicator = indicator
        self.bytes = bytes[...]
    }

    public init(_ indicator: HCIPacketIndicator, _ bytes: ArraySlice<UInt8>) {
        self.indicator = indicator
        self.bytes = bytes
    }

    /// The indicator followed by the packet, as written to a byte stream.
    public var framed: [UInt8] {
        var framed = [UInt8]()
        framed.reserveCapacity(bytes.count + 1)
        framed.append(indicator.rawValue)
        framed.append(contentsOf: bytes)
        return framed
    }

    public var description: String { "\(indicator) \(Hex.encode(bytes, separator: " "))" }

    public static func == (lhs: H4Packet, rhs: H4Packet) -> Bool {
        lhs.indicator == rhs.indicator && lhs.bytes.elementsEqual(rhs.bytes)
    }

    /// Decodes one whole framed packet, as a datagram transport (the Linux HCI socket) delivers it.
    public init(framed: [UInt8]) throws(PacketDecodingError) {
        try self.init(framed: framed[...])
    }

    public init(framed: ArraySlice<UInt8>) throws(PacketDecodingError) {
        var deframer = H4Deframer()
        let packets = try deframer.append(framed)
        guard packets.count == 1, let packet = packets.first, deframer.bufferedByteCount == 0 else {
            throw .lengthMismatch(context: "H4 packet", declared: packets.first.map { $0.bytes.count + 1 } ?? 0, actual: framed.count)
        }
        self = packet
    }
}

/// Cuts a byte stream into H4 packets, however the bytes were split by the operating system.
/// Whole packets come out as slices of the bytes given (no copy); only a packet cut across
/// two reads is copied, into the deframer's own buffer.
public struct H4Deframer: Sendable {
    private var buffer: [UInt8] = []

    public init() {}

    /// Bytes received but not yet part of a whole packet.
    public var bufferedByteCount: Int { buffer.count }

    /// Appends received bytes and returns every packet they complete, in order.
    /// Throws on an unknown packet indicator: the stream cannot be resynchronised after that.
    public mutating func append(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> [H4Packet] {
        var packets: [H4Packet] = []
        if buffer.isEmpty {
            let rest = try Self.cut(bytes, into: &packets)
            if !rest.isEmpty { buffer.append(contentsOf: rest) }
        } else {
            buffer.append(contentsOf: bytes)
            let rest = try Self.cut(buffer[...], into: &packets)
            // The packets keep the old storage alive; the buffer keeps only the unfinished tail.
            buffer = Array(rest)
        }
        return packets
    }

    /// Appends received bytes of any collection (a copy); see ``append(_:)-(ArraySlice<UInt8>)``.
    public mutating func append(_ bytes: some Collection<UInt8>) throws(PacketDecodingError) -> [H4Packet] {
        try append(ArraySlice(bytes))
    }

    /// Cuts whole packets off the front of `bytes` and returns what is left.
    private static func cut(_ bytes: ArraySlice<UInt8>, into packets: inout [H4Packet]) throws(PacketDecodingError) -> ArraySlice<UInt8> {
        var start = bytes.startIndex
        while start < bytes.endIndex {
            guard let indicator = HCIPacketIndicator(rawValue: bytes[start]) else {
                throw .unknownOpcode(context: "H4 packet indicator", opcode: UInt64(bytes[start]))
            }
            let header = indicator.header
            let available = bytes.endIndex - start - 1
            guard available >= header.size else { break }
            // The whole header is in, so its length field is.
            let lengthOffset = start - bytes.startIndex + 1 + header.lengthOffset
            let rawLength = header.lengthSize == 2
                ? ByteReader.uint16(in: bytes, at: lengthOffset).map(Int.init) ?? 0
                : Int(bytes[bytes.startIndex + lengthOffset])
            let length = rawLength & header.lengthMask
            let total = header.size + length
            guard available >= total else { break }
            packets.append(H4Packet(indicator, bytes[(start + 1)..<(start + 1 + total)]))
            start += 1 + total
        }
        return bytes[start...]
    }
}
