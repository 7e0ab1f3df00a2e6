/// The role of the local device on a connection (Core 6.0, Vol 4, Part E, 7.7.65.1, Role).
public enum ConnectionRole: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case central = 0x00
    case peripheral = 0x01

    public var description: String { self == .central ? "central" : "peripheral" }
}
