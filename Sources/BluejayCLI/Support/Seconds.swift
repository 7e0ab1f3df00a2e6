import ArgumentParser

/// A number of seconds typed on the command line. Only a finite number from 0 to a day is
/// accepted, so converting it to a `Duration` can never trap however it was typed: `nan`,
/// `inf`, `1e300` and `-1` are refused as usage errors when the arguments are parsed.
struct Seconds: ExpressibleByArgument, Sendable, Equatable, CustomStringConvertible {
    /// The longest wait a command accepts.
    static let maximum: Double = 86_400

    let value: Double

    init?(argument: String) {
        guard let value = Double(argument) else { return nil }
        self.init(value)
    }

    /// `nil` unless `value` is finite and from 0 to ``maximum``.
    init?(_ value: Double) {
        guard value.isFinite, value >= 0, value <= Self.maximum else { return nil }
        self.value = value
    }

    /// A whole number of seconds, for defaults (0 to a day).
    init(whole seconds: UInt16) {
        value = Double(seconds)
    }

    var duration: Duration { .milliseconds(Int64((value * 1000).rounded())) }

    var isZero: Bool { value == 0 }

    var description: String { value.rounded() == value ? String(Int(value)) : String(value) }

    static var defaultCompletionKind: CompletionKind { .default }
}
