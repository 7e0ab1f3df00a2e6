import BluetoothCore

/// The Own_Address_Type of LE scanning, advertising and initiating commands
/// (Core 6.0, Vol 4, Part E, 7.8.5, 7.8.10, 7.8.12).
public enum OwnAddressType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The public device address.
    case `public` = 0x00
    /// The random address set with LE Set Random Address.
    case random = 0x01
    /// A resolvable private address from the resolving list, else the public address.
    case resolvableOrPublic = 0x02
    /// A resolvable private address from the resolving list, else the random address.
    case resolvableOrRandom = 0x03

    public var description: String {
        switch self {
        case .public: return "public"
        case .random: return "random"
        case .resolvableOrPublic: return "RPA or public"
        case .resolvableOrRandom: return "RPA or random"
        }
    }
}

/// The address types an LE Extended Advertising Report can carry
/// (Core 6.0, Vol 4, Part E, 7.7.65.13, Address_Type and Direct_Address_Type).
public enum ExtendedReportAddressType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case `public` = 0x00
    case random = 0x01
    case publicIdentity = 0x02
    case randomIdentity = 0x03
    /// Direct address only: a resolvable private address the controller could not resolve.
    case unresolvedRandom = 0xFE
    /// Address only: no address was provided (anonymous advertising).
    case anonymous = 0xFF

    /// The LE address type, or `nil` for the two special values.
    public var addressType: AddressType? { AddressType(rawValue: rawValue) }

    public init(_ type: AddressType) {
        // Every AddressType raw value is an ExtendedReportAddressType raw value.
        self = ExtendedReportAddressType(rawValue: type.rawValue) ?? .public
    }

    public var description: String {
        switch self {
        case .unresolvedRandom: return "unresolved-random"
        case .anonymous: return "anonymous"
        default: return addressType?.description ?? "\(Hex.format(rawValue))"
        }
    }
}
