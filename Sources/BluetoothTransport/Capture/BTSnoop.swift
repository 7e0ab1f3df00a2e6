import BluetoothCore

/// The btsnoop file format, version 1: what Android's HCI snoop log, Bumble and Wireshark
/// (`btsnoop` file type) read. A 16-byte file header, then one record per HCI packet. Every
/// integer is big-endian.
///
/// Bluejay writes datalink 1002, "HCI UART (H4)": each record's data starts with the H4
/// packet indicator, so commands, events, ACL, SCO and ISO packets share one file and
/// Wireshark decodes them down to ATT.
public enum BTSnoop {
    /// `btsnoop\0`, the first 8 bytes of every file.
    public static let magic: [UInt8] = Array("btsnoop".utf8) + [0]
    /// The only version the format has.
    public static let version: UInt32 = 1
    /// Datalink type 1002: HCI UART (H4), the indicator byte before each packet.
    public static let datalinkH4: UInt32 = 1002
    /// The size of the file header: magic, version, datalink.
    public static let fileHeaderSize = 16
    /// The size of each record's header, before the packet data.
    public static let recordHeaderSize = 24
    /// Microseconds from midnight, January 1st of year 0 (the format's epoch) to the Unix epoch.
    public static let unixEpochOffsetMicroseconds: Int64 = 0x00DC_DDB3_0F2F_8000

    /// The file header: magic, version and datalink type.
    public struct FileHeader: Sendable, Equatable {
        public var version: UInt32
        public var datalink: UInt32

        public init(version: UInt32 = BTSnoop.version, datalink: UInt32 = BTSnoop.datalinkH4) {
            self.version = version
            self.datalink = datalink
        }

        public func encode() -> [UInt8] {
            var bytes = BTSnoop.magic
            bytes.reserveCapacity(BTSnoop.fileHeaderSize)
            BTSnoop.appendBigEndian(version, to: &bytes)
            BTSnoop.appendBigEndian(datalink, to: &bytes)
            return bytes
        }

        /// Decodes the first 16 bytes of a file; throws when they are not a btsnoop header.
        public static func decode(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> FileHeader {
            guard bytes.count >= BTSnoop.fileHeaderSize else {
                throw .truncated(context: "btsnoop file header", needed: BTSnoop.fileHeaderSize, available: bytes.count)
            }
            guard bytes.prefix(8).elementsEqual(BTSnoop.magic) else {
                throw .invalidValue(context: "btsnoop file header", field: "magic", value: UInt64(bytes[bytes.startIndex]))
            }
            let start = bytes.startIndex
            return FileHeader(version: BTSnoop.bigEndianUInt32(bytes, at: start + 8), datalink: BTSnoop.bigEndianUInt32(bytes, at: start + 12))
        }
    }

    /// A record's flags (btsnoop, datalink H4): bit 0 is the direction, bit 1 says whether the
    /// packet is a command or an event (set) or data (clear).
    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// Set: the host received the packet from the controller; clear: the host sent it.
        public static let received = Flags(rawValue: 1 << 0)
        /// Set: a command or an event; clear: ACL, SCO or ISO data.
        public static let commandOrEvent = Flags(rawValue: 1 << 1)

        /// The flags of a packet of this kind, going this way.
        public init(indicator: HCIPacketIndicator, received: Bool) {
            var flags: Flags = []
            if received { flags.insert(.received) }
            if indicator == .command || indicator == .event { flags.insert(.commandOrEvent) }
            self = flags
        }
    }

    /// One record: the header fields and the packet as written (indicator byte first).
    public struct Record: Sendable, Equatable {
        /// The packet's length as it was, before any truncation.
        public var originalLength: UInt32
        public var flags: Flags
        /// Packets lost before this one since the file was started (the writer's drops).
        public var cumulativeDrops: UInt32
        /// Microseconds since midnight, January 1st of year 0 (``BTSnoop/timestamp(unixMicroseconds:)``).
        public var timestamp: Int64
        /// The included data: the H4 indicator, then the packet.
        public var data: [UInt8]

        public init(originalLength: UInt32, flags: Flags, cumulativeDrops: UInt32, timestamp: Int64, data: [UInt8]) {
            self.originalLength = originalLength
            self.flags = flags
            self.cumulativeDrops = cumulativeDrops
            self.timestamp = timestamp
            self.data = data
        }

        /// The record of one H4 packet.
        public init(packet: H4Packet, received: Bool, cumulativeDrops: UInt32, timestamp: Int64) {
            self.init(originalLength: UInt32(packet.bytes.count + 1), flags: Flags(indicator: packet.indicator, received: received),
                      cumulativeDrops: cumulativeDrops, timestamp: timestamp, data: packet.framed)
        }

        public func encode() -> [UInt8] {
            var bytes: [UInt8] = []
            Self.append(originalLength: originalLength, flags: flags, cumulativeDrops: cumulativeDrops, timestamp: timestamp,
                        indicator: nil, data: data[...], to: &bytes)
            return bytes
        }

        /// Appends a record to `bytes` without building it first: the header, then `indicator`
        /// (when given) and `data`. The writer's path, one buffer for many records.
        static func append(originalLength: UInt32, flags: Flags, cumulativeDrops: UInt32, timestamp: Int64,
                           indicator: UInt8?, data: ArraySlice<UInt8>, to bytes: inout [UInt8]) {
            let included = UInt32(data.count + (indicator == nil ? 0 : 1))
            BTSnoop.appendBigEndian(originalLength, to: &bytes)
            BTSnoop.appendBigEndian(included, to: &bytes)
            BTSnoop.appendBigEndian(flags.rawValue, to: &bytes)
            BTSnoop.appendBigEndian(cumulativeDrops, to: &bytes)
            BTSnoop.appendBigEndian(UInt64(bitPattern: timestamp), to: &bytes)
            if let indicator { bytes.append(indicator) }
            bytes.append(contentsOf: data)
        }

        /// Decodes the record at the front of `bytes` and returns it with its encoded size;
        /// `nil` when `bytes` is empty (the end of the file).
        public static func decode(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> (record: Record, size: Int)? {
            guard !bytes.isEmpty else { return nil }
            guard bytes.count >= BTSnoop.recordHeaderSize else {
                throw .truncated(context: "btsnoop record header", needed: BTSnoop.recordHeaderSize, available: bytes.count)
            }
            let start = bytes.startIndex
            let included = Int(BTSnoop.bigEndianUInt32(bytes, at: start + 4))
            let size = BTSnoop.recordHeaderSize + included
            guard bytes.count >= size else {
                throw .truncated(context: "btsnoop record data", needed: size, available: bytes.count)
            }
            let timestamp = UInt64(BTSnoop.bigEndianUInt32(bytes, at: start + 16)) << 32 | UInt64(BTSnoop.bigEndianUInt32(bytes, at: start + 20))
            let record = Record(originalLength: BTSnoop.bigEndianUInt32(bytes, at: start),
                                flags: Flags(rawValue: BTSnoop.bigEndianUInt32(bytes, at: start + 8)),
                                cumulativeDrops: BTSnoop.bigEndianUInt32(bytes, at: start + 12),
                                timestamp: Int64(bitPattern: timestamp),
                                data: Array(bytes[(start + BTSnoop.recordHeaderSize)..<(start + size)]))
            return (record, size)
        }

        /// The packet the record holds (datalink H4).
        public func packet() throws(PacketDecodingError) -> H4Packet {
            try H4Packet(framed: data)
        }
    }

    /// Decodes a whole file: its header and every record. For tests and tools; the writer
    /// never reads.
    public static func decodeFile(_ bytes: [UInt8]) throws(PacketDecodingError) -> (header: FileHeader, records: [Record]) {
        let header = try FileHeader.decode(bytes[...])
        var records: [Record] = []
        var offset = fileHeaderSize
        while let (record, size) = try Record.decode(bytes[offset...]) {
            records.append(record)
            offset += size
        }
        return (header, records)
    }

    /// A btsnoop timestamp from microseconds since the Unix epoch.
    public static func timestamp(unixMicroseconds: Int64) -> Int64 {
        unixMicroseconds + unixEpochOffsetMicroseconds
    }

    static func appendBigEndian<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        var bigEndian = value.bigEndian
        withUnsafeBytes(of: &bigEndian) { bytes.append(contentsOf: $0) }
    }

    static func bigEndianUInt32(_ bytes: ArraySlice<UInt8>, at index: Int) -> UInt32 {
        bytes[index..<(index + 4)].reduce(0) { $0 << 8 | UInt32($1) }
    }
}
