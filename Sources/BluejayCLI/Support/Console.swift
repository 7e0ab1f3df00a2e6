import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Lines on stdout that reach a pipe at once (long-running commands are read line by line by
/// scripts and tests), and a live status line on a terminal.
enum Console {
    /// Whether stdout is a terminal.
    static let isTerminal = isatty(STDOUT_FILENO) == 1

    /// Prints a line and flushes it. Ends a live line first.
    static func line(_ text: String) {
        endLiveLine()
        print(text)
        fflush(nil)
    }

    /// On a terminal, replaces the live line with `text` (carriage return, no newline); else
    /// prints `text` as a line of its own.
    static func live(_ text: String) {
        guard isTerminal else {
            line(text)
            return
        }
        // Carriage return, the text, then erase whatever the previous text left to its right.
        print("\r\(text)\u{1B}[K", terminator: "")
        fflush(nil)
        liveLineShown.store(true)
    }

    /// Sends what was printed (by `print` or ``Output``) to stdout now.
    static func flush() {
        fflush(nil)
    }

    /// Moves past the live line, if one is shown.
    static func endLiveLine() {
        guard isTerminal, liveLineShown.exchange(false) else { return }
        print("")
        fflush(nil)
    }

    private static let liveLineShown = LiveFlag()
}

/// A flag for the live line, safe to touch from any thread.
private final class LiveFlag: Sendable {
    private let value = Mutex(false)
    func store(_ new: Bool) { value.withLock { $0 = new } }
    func exchange(_ new: Bool) -> Bool {
        value.withLock { old in
            defer { old = new }
            return old
        }
    }
}
