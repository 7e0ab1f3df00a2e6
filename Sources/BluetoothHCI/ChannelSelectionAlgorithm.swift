/// The channel selection algorithm of a connection (Core 6.0, Vol 4, Part E, 7.7.65.20).
public enum ChannelSelectionAlgorithm: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case algorithm1 = 0x00
    case algorithm2 = 0x01

    public var description: String { self == .algorithm1 ? "#1" : "#2" }
}
