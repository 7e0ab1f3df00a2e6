/// Why advertising data could not be encoded.
public enum AdvertisingDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The encoded data needs more octets than the advertising PDU can carry (31 for legacy
    /// advertising and scan response data, Core 6.0, Vol 6, Part B, 2.3.1).
    case doesNotFit(needed: Int, available: Int)
    /// One structure's data is longer than its one-octet Length field can describe (254).
    case structureTooLong(type: AdvertisingDataType, dataLength: Int)

    public var description: String {
        switch self {
        case let .doesNotFit(needed, available):
            return "the advertising data needs \(needed) octets but only \(available) fit; remove fields or move some to the scan response"
        case let .structureTooLong(type, length):
            return "the \(type.name) structure has \(length) octets of data; at most 254 fit in one structure"
        }
    }
}
