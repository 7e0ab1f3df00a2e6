import Logging
import Synchronization

/// Keeps the messages of a logger of its own, at every level, for tests that wait on what a
/// component says it is doing.
final class LogCapture: Sendable {
    private let messages = Mutex<[String]>([])

    /// A logger whose messages this capture keeps.
    var logger: Logger {
        Logger(label: "test") { _ in Handler(capture: self) }
    }

    /// Whether a message containing `text` was logged.
    func contains(_ text: String) -> Bool {
        messages.withLock { $0.contains { $0.contains(text) } }
    }

    fileprivate func append(_ message: String) {
        messages.withLock { $0.append(message) }
    }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            capture.append(event.message.description)
        }
    }
}
