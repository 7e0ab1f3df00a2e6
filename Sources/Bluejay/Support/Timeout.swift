import Foundation

/// How long to wait for something.
public enum Timeout: Sendable, Equatable, CustomStringConvertible {
    /// At most this many seconds.
    case seconds(TimeInterval)
    /// As long as it takes.
    case none

    /// The duration, or `nil` for ``none``. A negative or non-finite number of seconds
    /// counts as zero.
    public var duration: Duration? {
        switch self {
        case .none: return nil
        case let .seconds(seconds):
            guard seconds.isFinite, seconds > 0 else { return .zero }
            return .milliseconds(Int64((seconds * 1000).rounded()))
        }
    }

    public var description: String {
        switch self {
        case .none: return "no timeout"
        case let .seconds(seconds): return "\(seconds) s"
        }
    }
}
