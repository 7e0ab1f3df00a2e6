import BluetoothCore

/// Number Of Completed Packets (Core 6.0, Vol 4, Part E, 7.7.19): the controller freed ACL
/// buffers, so the host may send that many more packets on those connections.
public struct NumberOfCompletedPacketsEvent: HCIEventParameters, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x13
    public static let name = "Number Of Completed Packets"

    public struct Entry: Sendable, Equatable {
        public var connectionHandle: UInt16
        public var completedPackets: UInt16
        public init(connectionHandle: UInt16, completedPackets: UInt16) {
            self.connectionHandle = connectionHandle
            self.completedPackets = completedPackets
        }
    }

    public var entries: [Entry]

    public init(entries: [Entry]) { self.entries = entries }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        let count = Int(try reader.readUInt8())
        // Each handle is followed by its count (Core 6.0, Vol 4, Part E, 5.2 and 7.7.19: array
        // parameters are laid out element by element), as controllers, Bumble and Zephyr do.
        // With one handle, the only layout seen in practice, both readings agree.
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let handle = try reader.readUInt16() & 0x0FFF
            entries.append(Entry(connectionHandle: handle, completedPackets: try reader.readUInt16()))
        }
        try reader.expectEnd()
        self.entries = entries
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: entries.count))
        for entry in entries {
            writer.write(entry.connectionHandle & 0x0FFF)
            writer.write(entry.completedPackets)
        }
    }

    public var description: String {
        "Number Of Completed Packets " + entries.map { "\(Hex.format($0.connectionHandle)):\($0.completedPackets)" }.joined(separator: " ")
    }
}
