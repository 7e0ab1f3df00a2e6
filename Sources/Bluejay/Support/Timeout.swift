import Foundation

/// How long to wait for something.
public enum Timeout: Sendable, Equatable, CustomStringConvertible {
    /// At most this many seconds.
    case seconds(TimeInterval)
    /// As long as it takes.
    case none

    /// The duration, or `nil` for ``none``. NaN and negative numbers of seconds count as zero,
    /// numbers beyond 10⁹ seconds (about 31 years; infinity too) as 10⁹ seconds.
    public var duration: Duration? {
        switch self {
        case .none: return nil
        case let .seconds(seconds): return .clampedSeconds(seconds)
        }
    }

    public var description: String {
        switch self {
        case .none: return "no timeout"
        case let .seconds(seconds): return "\(seconds) s"
        }
    }
}

extension Duration {
    /// The longest duration a number of seconds from the app turns into.
    static let longestFromSeconds: Duration = .seconds(1_000_000_000)

    /// `seconds` as a duration, whatever the app passed: NaN and negative numbers are zero,
    /// numbers beyond ``longestFromSeconds`` (infinity too) are that, so no value can trap.
    static func clampedSeconds(_ seconds: Double) -> Duration {
        guard seconds > 0 else { return .zero }
        guard seconds < 1_000_000_000 else { return longestFromSeconds }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
