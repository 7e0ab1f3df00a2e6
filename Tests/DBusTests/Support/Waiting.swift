@testable import DBus
import Testing

/// The next element of `iterator`, waiting at most `timeout` (a hang guard, not a delay).
func next<Element: Sendable>(
    _ iterator: inout DBusSignals<Element>.AsyncIterator, timeout: Duration = .seconds(10)
) async throws -> Element {
    let box = IteratorBox(iterator)
    let element = try await withThrowingTaskGroup(of: Element?.self) { group in
        group.addTask { try await box.next() }
        group.addTask {
            try await Task.sleep(for: timeout)
            throw DaemonError("no signal within \(timeout)")
        }
        defer { group.cancelAll() }
        return try await group.next() ?? nil
    }
    iterator = box.iterator
    guard let element else { throw DaemonError("the signal stream ended") }
    return element
}

/// The next signal of a stream, waiting at most `timeout`.
func next(_ iterator: inout DBusSignalStream.AsyncIterator, timeout: Duration = .seconds(10)) async throws -> DBusMessage {
    var typed = DBusSignals.AsyncIterator(base: iterator, decode: { $0 })
    let message = try await next(&typed, timeout: timeout)
    iterator = typed.base
    return message
}

/// Moves an iterator into a child task and back.
private final class IteratorBox<Element: Sendable>: @unchecked Sendable {
    var iterator: DBusSignals<Element>.AsyncIterator

    init(_ iterator: DBusSignals<Element>.AsyncIterator) {
        self.iterator = iterator
    }

    func next() async throws -> Element? {
        try await iterator.next()
    }
}
