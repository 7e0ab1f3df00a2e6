import BluetoothCore

/// The Link_Type of Data Buffer Overflow (Core 6.0, Vol 4, Part E, 7.7.26). A struct, not an
/// enum, so that a link type added by a later specification still decodes.
public struct DataBufferOverflowLinkType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Synchronous (voice) buffers overflowed.
    public static let synchronous = DataBufferOverflowLinkType(rawValue: 0x00)
    /// ACL data buffers overflowed.
    public static let acl = DataBufferOverflowLinkType(rawValue: 0x01)

    public var description: String {
        switch self {
        case .synchronous: return "synchronous"
        case .acl: return "ACL"
        default: return "link type \(Hex.format(rawValue))"
        }
    }
}
