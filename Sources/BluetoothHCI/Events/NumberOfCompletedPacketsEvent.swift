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
        // The handles come first, then the counts (Core 6.0, Vol 4, Part E, 7.7.19).
        var handles: [UInt16] = []
        for _ in 0..<count { handles.append(try reader.readUInt16() & 0x0FFF) }
        var entries: [Entry] = []
        for handle in handles {
            entries.append(Entry(connectionHandle: handle, completedPackets: try reader.readUInt16()))
        }
        try reader.expectEnd()
        self.entries = entries
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(UInt8(truncatingIfNeeded: entries.count))
        for entry in entries { writer.write(entry.connectionHandle) }
        for entry in entries { writer.write(entry.completedPackets) }
    }

    public var description: String {
        "Number Of Completed Packets " + entries.map { "0x\(String($0.connectionHandle, radix: 16)):\($0.completedPackets)" }.joined(separator: " ")
    }
}
