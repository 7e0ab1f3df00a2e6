/// The inputs of every benchmark, generated deterministically so that Bluejay's benchmarks,
/// `bluejay-compare` and `compare/bumble_bench.py` work on the same bytes.
///
/// The bytes are laid out by hand from the Core specification (not with Bluejay's encoders),
/// so that a decoder is never measured on input its own encoder produced.
/// `bluejay-compare generate DIR` writes them to files that the Bumble side reads
/// (see ``Corpus/write(to:)`` for the format).
public struct Corpus: Sendable {
    /// HCI LE Advertising Report events, each with 1 to 3 reports: event code, length,
    /// parameters (no H4 indicator).
    public var advertisingReportEvents: [[UInt8]]
    /// A byte stream of H4-framed packets (indicator first): advertising reports, Number Of
    /// Completed Packets, Command Complete events and ACL data of 27 and 251 octets.
    public var h4Stream: [UInt8]
    /// The number of packets in ``h4Stream``.
    public var h4PacketCount: Int
    /// How the stream is cut as a transport would read it: 1 to 61 octets at a time.
    public var h4ChunkSizes: [Int]
    /// ATT Handle Value Notifications, values of 1 to 244 octets.
    public var attNotifications: [[UInt8]]
    /// ATT Read By Type Responses: characteristic declarations (16- and 128-bit UUIDs) and
    /// Read Using Characteristic UUID answers.
    public var attReadByTypeResponses: [[UInt8]]
    /// Legacy advertising data of exactly 31 octets: flags, two 16-bit service UUIDs, a
    /// complete local name and manufacturer data.
    public var advertisingData: [[UInt8]]
    /// The fields of LE Create Connection commands.
    public var createConnections: [CreateConnectionFields]
    /// L2CAP basic frames of 512 octets (4-octet header, 508 octets of payload on CID 4).
    public var l2capPDUs: [[UInt8]]
    /// ``l2capPDUs`` cut into ACL data packets of at most 27 octets of data, encoded (no H4
    /// indicator), handle 0x0040.
    public var aclFragments27: [[UInt8]]

    /// The connection handle of every ACL packet in the corpus.
    public static let connectionHandle: UInt16 = 0x0040

    /// LE Create Connection parameters as a neutral record (address most significant first).
    public struct CreateConnectionFields: Sendable {
        public var scanInterval: UInt16
        public var scanWindow: UInt16
        public var initiatorFilterPolicy: UInt8
        public var peerAddressType: UInt8
        /// Most significant byte first, as people write addresses.
        public var peerAddress: [UInt8]
        public var ownAddressType: UInt8
        public var connectionIntervalMin: UInt16
        public var connectionIntervalMax: UInt16
        public var maxLatency: UInt16
        public var supervisionTimeout: UInt16
        public var minCELength: UInt16
        public var maxCELength: UInt16

        /// The record as written to `create_connection.bin`: 2+2+1+1+6+1+2*6 = 25 octets.
        var record: [UInt8] {
            var bytes: [UInt8] = []
            func u16(_ value: UInt16) { bytes += [UInt8(value & 0xFF), UInt8(value >> 8)] }
            u16(scanInterval); u16(scanWindow)
            bytes += [initiatorFilterPolicy, peerAddressType] + peerAddress + [ownAddressType]
            u16(connectionIntervalMin); u16(connectionIntervalMax); u16(maxLatency)
            u16(supervisionTimeout); u16(minCELength); u16(maxCELength)
            return bytes
        }
    }

    /// Generates the corpus; the same `seed` always gives the same bytes.
    public init(seed: UInt64 = 0xB1_0E_7A_11, count: Int = 1000, h4Packets: Int = 600) {
        var rng = SplitMix64(seed: seed)
        advertisingData = (0..<count).map { _ in Self.makeAdvertisingData(&rng) }
        advertisingReportEvents = (0..<count).map { _ in Self.makeAdvertisingReportEvent(&rng) }
        attNotifications = (0..<count).map { _ in Self.makeNotification(&rng) }
        attReadByTypeResponses = (0..<count).map { _ in Self.makeReadByTypeResponse(&rng) }
        createConnections = (0..<count).map { _ in Self.makeCreateConnection(&rng) }
        l2capPDUs = (0..<64).map { _ in
            [0xFC, 0x01, 0x04, 0x00] + (0..<508).map { _ in rng.byte() }  // length 508, CID 4
        }
        aclFragments27 = l2capPDUs.flatMap { Self.fragment($0, size: 27) }
        (h4Stream, h4PacketCount) = Self.makeH4Stream(&rng, packets: h4Packets)
        var chunks: [Int] = []
        var total = 0
        while total < h4Stream.count {
            let size = min(1 + Int(rng.next() % 61), h4Stream.count - total)
            chunks.append(size)
            total += size
        }
        h4ChunkSizes = chunks
    }

    // MARK: Generators

    static func makeAdvertisingData(_ rng: inout SplitMix64) -> [UInt8] {
        let nameLength = 4 + Int(rng.next() % 5)  // 4...8
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789-".utf8)
        let name = (0..<nameLength).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
        let manufacturerLength = 8 + (8 - nameLength)
        let uuids: [UInt16] = [0x1800 + UInt16(rng.next() % 0x30), 0x180A + UInt16(rng.next() % 0x10)]
        let company = UInt16(rng.next() % 0x0A00)
        var bytes: [UInt8] = [0x02, 0x01, 0x06]  // Flags: LE General Discoverable, BR/EDR not supported
        bytes += [0x05, 0x03] + uuids.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }  // Complete 16-bit UUIDs
        bytes += [UInt8(1 + nameLength), 0x09] + name  // Complete Local Name
        bytes += [UInt8(3 + manufacturerLength), 0xFF, UInt8(company & 0xFF), UInt8(company >> 8)]
        bytes += (0..<manufacturerLength).map { _ in rng.byte() }
        precondition(bytes.count == 31)
        return bytes
    }

    static func makeAdvertisingReportEvent(_ rng: inout SplitMix64) -> [UInt8] {
        let count = 1 + Int(rng.next() % 3)
        var parameters: [UInt8] = [0x02, UInt8(count)]  // subevent LE Advertising Report, Num_Reports
        for _ in 0..<count {
            let eventType: UInt8 = [0x00, 0x02, 0x03, 0x04][Int(rng.next() % 4)]
            let addressType = UInt8(rng.next() % 2)
            let address = (0..<6).map { _ in rng.byte() }
            let data: [UInt8]
            if eventType == 0x04 {  // scan response: a name, or nothing
                let length = Int(rng.next() % 12)
                data = length == 0 ? [] : [UInt8(length + 1), 0x09] + (0..<length).map { _ in 0x41 + UInt8(rng.next() % 26) }
            } else {
                data = makeAdvertisingData(&rng)
            }
            let rssi = Int8(-20 - Int(rng.next() % 80))
            parameters += [eventType, addressType] + address + [UInt8(data.count)] + data + [UInt8(bitPattern: rssi)]
        }
        return [0x3E, UInt8(parameters.count)] + parameters
    }

    static func makeNotification(_ rng: inout SplitMix64) -> [UInt8] {
        let handle = UInt16(0x0003 + rng.next() % 0x00FC)
        let length = rng.next() % 5 == 0 ? 61 + Int(rng.next() % 184) : 1 + Int(rng.next() % 60)
        return [0x1B, UInt8(handle & 0xFF), UInt8(handle >> 8)] + (0..<length).map { _ in rng.byte() }
    }

    static func makeReadByTypeResponse(_ rng: inout SplitMix64) -> [UInt8] {
        var handle = UInt16(0x0002 + rng.next() % 0x0100)
        func pair(valueLength: Int, _ value: (inout SplitMix64) -> [UInt8]) -> [UInt8] {
            defer { handle += 2 }
            return [UInt8(handle & 0xFF), UInt8(handle >> 8)] + value(&rng)
        }
        switch rng.next() % 3 {
        case 0:  // characteristic declarations, 16-bit UUIDs, MTU 23: up to 3 pairs of 7
            let count = 1 + Int(rng.next() % 3)
            var bytes: [UInt8] = [0x09, 7]
            for _ in 0..<count {
                bytes += pair(valueLength: 5) { rng in
                    let valueHandle = handle + 1
                    let uuid = UInt16(0x2A00 + rng.next() % 0x100)
                    return [[0x02, 0x0A, 0x12, 0x10][Int(rng.next() % 4)], UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8),
                            UInt8(uuid & 0xFF), UInt8(uuid >> 8)]
                }
            }
            return bytes
        case 1:  // a characteristic declaration with a 128-bit UUID: one pair of 21
            return [0x09, 21] + pair(valueLength: 19) { rng in
                let valueHandle = handle + 1
                return [0x1A, UInt8(valueHandle & 0xFF), UInt8(valueHandle >> 8)] + (0..<16).map { _ in rng.byte() }
            }
        default:  // Read Using Characteristic UUID at MTU 247: values of 1 to 20 octets
            let valueLength = 1 + Int(rng.next() % 20)
            let count = 1 + Int(rng.next() % UInt64(min(8, 245 / (2 + valueLength))))
            var bytes: [UInt8] = [0x09, UInt8(2 + valueLength)]
            for _ in 0..<count {
                bytes += pair(valueLength: valueLength) { rng in (0..<valueLength).map { _ in rng.byte() } }
            }
            return bytes
        }
    }

    static func makeCreateConnection(_ rng: inout SplitMix64) -> CreateConnectionFields {
        let intervalMin = UInt16(6 + rng.next() % 40)
        return CreateConnectionFields(
            scanInterval: UInt16(4 + rng.next() % 0x4000), scanWindow: 4 + UInt16(rng.next() % 4),
            initiatorFilterPolicy: 0, peerAddressType: UInt8(rng.next() % 2),
            peerAddress: (0..<6).map { _ in rng.byte() }, ownAddressType: UInt8(rng.next() % 2),
            connectionIntervalMin: intervalMin, connectionIntervalMax: intervalMin + UInt16(rng.next() % 16),
            maxLatency: UInt16(rng.next() % 4), supervisionTimeout: UInt16(100 + rng.next() % 400),
            minCELength: 0, maxCELength: UInt16(rng.next() % 2) * 4)
    }

    /// ACL data packets (header and data, no indicator) carrying `pdu`, like a host sends them.
    static func fragment(_ pdu: [UInt8], size: Int) -> [[UInt8]] {
        stride(from: 0, to: pdu.count, by: size).map { offset in
            let end = min(offset + size, pdu.count)
            let flags: UInt16 = offset == 0 ? 0x0000 : 0x1000
            let header = connectionHandle | flags
            let length = UInt16(end - offset)
            return [UInt8(header & 0xFF), UInt8(header >> 8), UInt8(length & 0xFF), UInt8(length >> 8)] + pdu[offset..<end]
        }
    }

    static func makeH4Stream(_ rng: inout SplitMix64, packets: Int) -> ([UInt8], Int) {
        var stream: [UInt8] = []
        for _ in 0..<packets {
            let kind = rng.next() % 20
            switch kind {
            case 0..<10: stream += [0x04] + makeAdvertisingReportEvent(&rng)
            case 10..<13:  // Number Of Completed Packets: one handle, one packet
                stream += [0x04, 0x13, 0x05, 0x01, UInt8(connectionHandle & 0xFF), UInt8(connectionHandle >> 8), 0x01, 0x00]
            case 13..<15:  // Command Complete for LE Set Scan Enable
                stream += [0x04, 0x0E, 0x04, 0x01, 0x0C, 0x20, 0x00]
            default:
                let size = kind < 18 ? 27 : 251
                let flags: UInt16 = kind == 15 ? 0x2000 : 0x1000
                let header = connectionHandle | flags
                stream += [0x02, UInt8(header & 0xFF), UInt8(header >> 8), UInt8(size & 0xFF), UInt8(size >> 8)]
                stream += (0..<size).map { _ in rng.byte() }
            }
        }
        return (stream, packets)
    }
}

/// A small deterministic generator (SplitMix64), the same on every platform.
public struct SplitMix64: Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func byte() -> UInt8 { UInt8(truncatingIfNeeded: next() >> 24) }
}
