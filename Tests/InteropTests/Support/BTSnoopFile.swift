import Foundation
import Testing

/// A btsnoop capture (version 1, datalink H4) read by the tests themselves, so that no test
/// trusts the writer's own reader.
enum BTSnoopFile {
    /// One record: its flags (bit 0: received by the host, bit 1: command or event) and the H4
    /// packet, indicator first.
    typealias Record = (flags: UInt32, data: [UInt8])

    /// A command the host sent: its opcode and parameters.
    struct Command: CustomStringConvertible {
        var opcode: UInt16
        var parameters: [UInt8]
        var description: String { String(format: "0x%04X", opcode) + "\(parameters)" }
    }

    /// The records of the file; fails the test unless it is a btsnoop H4 file of whole records.
    static func records(_ path: String) throws -> [Record] {
        try #require(parse(path), "\(path) is not a whole btsnoop file (version 1, datalink H4, complete records)")
    }

    /// The HCI commands in the file, in order.
    static func commands(_ path: String) throws -> [Command] {
        try records(path).compactMap { record in
            let data = record.data
            guard record.flags == 2, data.count >= 4, data[0] == 0x01 else { return nil }
            return Command(opcode: UInt16(data[1]) | UInt16(data[2]) << 8, parameters: Array(data.dropFirst(4)))
        }
    }

    /// The controller's answers to commands, in order: the opcode and the status of each
    /// Command Complete (its first return parameter) and Command Status event.
    static func answers(_ path: String) throws -> [(opcode: UInt16, status: UInt8)] {
        try records(path).compactMap { record in
            let data = record.data
            guard record.flags == 3, data.count >= 3, data[0] == 0x04 else { return nil }
            switch data[1] {
            case 0x0E where data.count >= 7: return (UInt16(data[4]) | UInt16(data[5]) << 8, data[6])
            case 0x0F where data.count >= 7: return (UInt16(data[5]) | UInt16(data[6]) << 8, data[3])
            default: return nil
            }
        }
    }

    /// The records, or `nil` unless the file is a btsnoop H4 file of whole records.
    static func parse(_ path: String) -> [Record]? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let bytes = Array(data)
        guard bytes.count >= 16, bytes.prefix(8).elementsEqual(Array("btsnoop".utf8) + [0]) else { return nil }
        func word(_ offset: Int) -> UInt32 { bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | UInt32($1) } }
        guard word(8) == 1, word(12) == 1002 else { return nil }
        var records: [Record] = []
        var offset = 16
        while offset + 24 <= bytes.count {
            let length = Int(word(offset + 4))
            guard offset + 24 + length <= bytes.count else { return nil }
            records.append((word(offset + 8), Array(bytes[(offset + 24)..<(offset + 24 + length)])))
            offset += 24 + length
        }
        return offset == bytes.count ? records : nil
    }
}
