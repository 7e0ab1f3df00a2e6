/// Why a ``BondStore`` could not keep or forget a bond.
public enum BondStoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The bond cannot be kept as it is; the text says why (e.g. a key size outside 7…16).
    case invalidBond(String)
    /// The storage failed; the text says where and how.
    case writeFailed(String)
    /// A bond is kept but cannot be read now (out of file descriptors, an I/O error, no
    /// permission); the text says which and why. It is not removed: try again.
    case readFailed(String)

    public var description: String {
        switch self {
        case let .invalidBond(why): return "invalid bond: \(why)"
        case let .writeFailed(what): return what
        case let .readFailed(what): return what
        }
    }
}
