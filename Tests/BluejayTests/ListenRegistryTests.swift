@testable import Bluejay
import Foundation
import Synchronization
import Testing

private let heartRateService = ServiceIdentifier(uuid: "180D")
private let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
private let location = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
private let ignore: ListenHandler = { _ in }

@Suite("Listen bookkeeping", .timeLimit(.minutes(1)))
struct ListenRegistryTests {
    @Test("A trap listen refuses a second listen on the same characteristic")
    func trap() {
        var registry = ListenRegistry()
        guard case .installed = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("first listen not installed")
            return
        }
        guard case .trapped = registry.admit(heartRate, handler: ignore, option: .replaceable) else {
            Issue.record("second listen not trapped")
            return
        }
        #expect(registry.contains(heartRate))
    }

    @Test("A replaceable listen is replaced; the old handler is handed back")
    func replace() {
        var registry = ListenRegistry()
        guard case let .installed(first) = registry.admit(heartRate, handler: ignore, option: .replaceable),
              case let .replaced(previous, _, second) = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("unexpected admissions")
            return
        }
        #expect(previous != nil)
        #expect(second != first)
        #expect(registry.record(for: heartRate)?.option == .replaceable, "the existing listen's option stays")
        #expect(registry.remove(heartRate, generation: first) == nil, "an old generation does not remove the new listen")
        #expect(registry.remove(heartRate, generation: second) != nil)
    }

    @Test("Restored listens have no handler until the app installs one")
    func restored() {
        var registry = ListenRegistry()
        _ = registry.admit(location, handler: ignore, option: .trap)
        #expect(registry.addRestored([heartRate, location]) == [heartRate], "an existing listen is left alone")
        #expect(registry.record(for: heartRate)?.handler == nil)
        guard case let .replaced(previous, _, _) = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("the restored listen should take the handler")
            return
        }
        #expect(previous == nil)
        #expect(registry.record(for: heartRate)?.option == .trap)
    }

    @Test("A dropped link keeps regular listens for re-enabling and ends synchronous ones")
    func linkDrop() {
        var registry = ListenRegistry()
        _ = registry.admit(heartRate, handler: ignore, option: .trap)
        _ = registry.admit(location, handler: ignore, option: .trap, synchronous: true)
        registry.setSubscribed(heartRate, subscription: FakeSubscription())
        registry.setSubscribed(location, subscription: FakeSubscription())
        #expect(registry.toResubscribe.isEmpty)
        let ended = registry.linkDidDrop()
        #expect(ended.count == 1 && ended.first?.isSynchronous == true)
        #expect(registry.toResubscribe == [heartRate])
        #expect(registry.persistable == [heartRate])
    }
}

/// A subscription that only records its cancellation.
private final class FakeSubscription: ListenSubscription {
    private let cancelled = Mutex(false)
    var isCancelled: Bool { cancelled.withLock { $0 } }
    func cancel() { cancelled.withLock { $0 = true } }
}
