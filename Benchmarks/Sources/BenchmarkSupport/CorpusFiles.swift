import Foundation

/// The corpus on disk, for the Bumble side of the comparison (and read back by
/// `bluejay-compare run`, so that both sides decode the bytes in the files).
///
/// Every `*.bin` file but `h4_stream.bin` is a list of records, each a 4-octet little-endian
/// length and that many octets. `h4_stream.bin` is the raw stream, `h4_chunks.bin` holds its
/// chunk sizes as 2-octet little-endian integers. `manifest.json` gives the counts.
extension Corpus {
    public enum File {
        public static let advertisingReports = "adv_reports.bin"
        public static let h4Stream = "h4_stream.bin"
        public static let h4Chunks = "h4_chunks.bin"
        public static let attNotifications = "att_notifications.bin"
        public static let attReadByType = "att_read_by_type.bin"
        public static let advertisingData = "adv_data.bin"
        public static let createConnection = "create_connection.bin"
        public static let l2capPDUs = "l2cap_pdus.bin"
        public static let aclFragments27 = "acl_fragments_27.bin"
        public static let manifest = "manifest.json"
    }

    public func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        func save(_ name: String, _ bytes: [UInt8]) throws {
            try Data(bytes).write(to: directory.appendingPathComponent(name))
        }
        try save(File.advertisingReports, Self.records(advertisingReportEvents))
        try save(File.h4Stream, h4Stream)
        try save(File.h4Chunks, h4ChunkSizes.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        try save(File.attNotifications, Self.records(attNotifications))
        try save(File.attReadByType, Self.records(attReadByTypeResponses))
        try save(File.advertisingData, Self.records(advertisingData))
        try save(File.createConnection, Self.records(createConnections.map(\.record)))
        try save(File.l2capPDUs, Self.records(l2capPDUs))
        try save(File.aclFragments27, Self.records(aclFragments27))
        let manifest = """
            {"h4_packets": \(h4PacketCount), "adv_reports": \(advertisingReportEvents.count), \
            "att_notifications": \(attNotifications.count), "att_read_by_type": \(attReadByTypeResponses.count), \
            "adv_data": \(advertisingData.count), "create_connection": \(createConnections.count), \
            "l2cap_pdus": \(l2capPDUs.count), "acl_fragments_27": \(aclFragments27.count)}

            """
        try save(File.manifest, Array(manifest.utf8))
    }

    /// Reads a corpus written by ``write(to:)``.
    public init(reading directory: URL) throws {
        func load(_ name: String) throws -> [UInt8] {
            [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        advertisingReportEvents = try Self.parseRecords(load(File.advertisingReports))
        h4Stream = try load(File.h4Stream)
        let chunkBytes = try load(File.h4Chunks)
        h4ChunkSizes = stride(from: 0, to: chunkBytes.count - 1, by: 2).map { Int(chunkBytes[$0]) | Int(chunkBytes[$0 + 1]) << 8 }
        attNotifications = try Self.parseRecords(load(File.attNotifications))
        attReadByTypeResponses = try Self.parseRecords(load(File.attReadByType))
        advertisingData = try Self.parseRecords(load(File.advertisingData))
        createConnections = try Self.parseRecords(load(File.createConnection)).map { record in
            func u16(_ at: Int) -> UInt16 { UInt16(record[at]) | UInt16(record[at + 1]) << 8 }
            return CreateConnectionFields(
                scanInterval: u16(0), scanWindow: u16(2), initiatorFilterPolicy: record[4], peerAddressType: record[5],
                peerAddress: Array(record[6..<12]), ownAddressType: record[12], connectionIntervalMin: u16(13),
                connectionIntervalMax: u16(15), maxLatency: u16(17), supervisionTimeout: u16(19), minCELength: u16(21),
                maxCELength: u16(23))
        }
        l2capPDUs = try Self.parseRecords(load(File.l2capPDUs))
        aclFragments27 = try Self.parseRecords(load(File.aclFragments27))
        // Count the packets by walking the framing (the manifest says the same).
        var count = 0
        var offset = 0
        while offset < h4Stream.count {
            switch h4Stream[offset] {
            case 0x02: offset += 5 + (Int(h4Stream[offset + 3]) | Int(h4Stream[offset + 4]) << 8)
            case 0x04: offset += 3 + Int(h4Stream[offset + 2])
            default: throw CorpusError.malformed("h4_stream.bin: indicator \(h4Stream[offset]) at \(offset)")
            }
            count += 1
        }
        h4PacketCount = count
    }

    static func records(_ items: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        for item in items {
            let length = UInt32(item.count)
            bytes += [UInt8(length & 0xFF), UInt8((length >> 8) & 0xFF), UInt8((length >> 16) & 0xFF), UInt8(length >> 24)]
            bytes += item
        }
        return bytes
    }

    static func parseRecords(_ bytes: [UInt8]) throws -> [[UInt8]] {
        var items: [[UInt8]] = []
        var offset = 0
        while offset < bytes.count {
            guard offset + 4 <= bytes.count else { throw CorpusError.malformed("record header at \(offset)") }
            let length = Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 3]) << 24
            guard offset + 4 + length <= bytes.count else { throw CorpusError.malformed("record at \(offset)") }
            items.append(Array(bytes[(offset + 4)..<(offset + 4 + length)]))
            offset += 4 + length
        }
        return items
    }
}

public enum CorpusError: Error, CustomStringConvertible {
    case malformed(String)
    public var description: String {
        switch self {
        case let .malformed(what): return "malformed corpus: \(what)"
        }
    }
}

/// CRC-32 (IEEE 802.3), as Python's `zlib.crc32`, to compare encoders' output across stacks.
public struct CRC32: Sendable {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 { crc = crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        return crc
    }

    public private(set) var value: UInt32 = 0

    public init() {}

    public mutating func update(_ bytes: some Sequence<UInt8>) {
        var crc = ~value
        for byte in bytes { crc = Self.table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        value = ~crc
    }

    public var hex: String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 8 - digits.count) + digits
    }
}
