import BluetoothCore

/// Number Of Completed Packets (Core 6.0, Vol 4, Part E, 7.7.19): the controller freed ACL
/// buffers, so the host may send that many more packets on those connections.
public struct NumberOfCompletedPacketsEvent: HCIEventParameters, PacketFields, CustomStringConvertible {
    public static let eventCode: UInt8 = 0x13
    public static let name = "Number Of Completed Packets"

    public struct Entry: Sendable, Equatable, PacketFields {
        public var connectionHandle: UInt16 = 0
        public var completedPackets: UInt16 = 0
        public init() {}
        public init(connectionHandle: UInt16, completedPackets: UInt16) {
            self.connectionHandle = connectionHandle
            self.completedPackets = completedPackets
        }
        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.connectionHandle(&connectionHandle)
            try coder.uint16(&completedPackets)
        }
    }

    public var entries: [Entry] = []

    public init() {}

    public init(entries: [Entry]) { self.entries = entries }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        var count = UInt8(truncatingIfNeeded: entries.count)
        try coder.uint8(&count)
        // Each handle is followed by its count (Core 6.0, Vol 4, Part E, 5.2 and 7.7.19: array
        // parameters are laid out element by element), as controllers, Bumble and Zephyr do.
        // With one handle, the only layout seen in practice, both readings agree.
        try coder.list(&entries, count: Int(count))
        try coder.end()
    }

    public var description: String {
        "Number Of Completed Packets " + entries.map { "\(Hex.format($0.connectionHandle)):\($0.completedPackets)" }.joined(separator: " ")
    }
}
