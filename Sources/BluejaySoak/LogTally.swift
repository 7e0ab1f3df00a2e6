import Foundation
import Logging
import Synchronization

/// Counts the stack's warnings and errors (swift-log) during a run, by level and by message
/// with its numbers and addresses blanked out, so that the report shows which ones came and
/// how often. Lines below warning are never formatted. With `verbose`, lines are also
/// printed to standard error.
final class LogTally: Sendable {
    /// The tally the logging system writes to (``bootstrap(verbose:)``).
    static let shared = LogTally()

    private struct State {
        var levels: [Logger.Level: Int] = [:]
        var messages: [String: Int] = [:]
        var verbose = false
    }

    /// Distinct messages kept (the rest are counted under their level only).
    static let distinctMessageLimit = 200

    private let state = Mutex(State())

    /// Sends every logger's warnings and errors here. Call once, before any logger is made.
    static func bootstrap(verbose: Bool) {
        shared.state.withLock { $0.verbose = verbose }
        LoggingSystem.bootstrap { label in TallyLogHandler(label: label, tally: shared) }
    }

    fileprivate func record(_ level: Logger.Level, label: String, message: String) {
        let key = "\(level) \(label): \(Self.normalized(message))"
        let verbose = state.withLock { state -> Bool in
            state.levels[level, default: 0] += 1
            if state.messages[key] != nil || state.messages.count < Self.distinctMessageLimit {
                state.messages[key, default: 0] += 1
            }
            return state.verbose
        }
        if verbose { FileHandle.standardError.write(Data("[\(level)] \(label): \(message)\n".utf8)) }
    }

    /// Lines logged at `level` so far.
    func count(_ level: Logger.Level) -> Int { state.withLock { $0.levels[level, default: 0] } }

    /// The most frequent messages, most frequent first.
    func top(_ limit: Int) -> [(String, Int)] {
        state.withLock { state in
            state.messages.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(limit).map { ($0.key, $0.value) }
        }
    }

    /// The message with runs of digits and hex numbers as `#`, cut at 110 characters.
    static func normalized(_ message: String) -> String {
        var result = ""
        var inNumber = false
        for character in message {
            if character.isHexDigit && (character.isNumber || inNumber) {
                if !inNumber { result.append("#") }
                inNumber = true
            } else {
                inNumber = false
                result.append(character)
            }
        }
        return result.count > 110 ? String(result.prefix(110)) + "…" : result
    }
}

/// The swift-log handler of the soak: warnings and up go to the ``LogTally``.
struct TallyLogHandler: LogHandler {
    let label: String
    let tally: LogTally
    var logLevel: Logger.Level = .warning
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        tally.record(event.level, label: label, message: event.message.description)
    }
}
