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

    @Test("A replaceable listen is replaced; the old listener is handed back")
    func replace() {
        var registry = ListenRegistry()
        guard case let .installed(first) = registry.admit(heartRate, handler: ignore, option: .replaceable),
              case let .replaced(previous, second) = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("unexpected admissions")
            return
        }
        #expect(previous.map(\.id) == [first])
        #expect(second != first)
        #expect(registry.record(for: heartRate)?.option == .replaceable, "the existing listen's option stays")
        #expect(registry.remove(heartRate, listener: first) == nil, "an old listener does not remove the new listen")
        #expect(registry.remove(heartRate, listener: second)?.record != nil)
    }

    @Test("Shared listeners join; the record goes with the last one")
    func shared() {
        var registry = ListenRegistry()
        guard case let .installed(first) = registry.admit(heartRate, handler: ignore, option: .shared),
              case let .joined(second) = registry.admit(heartRate, handler: ignore, option: .shared),
              case let .joined(third) = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("unexpected admissions")
            return
        }
        #expect(registry.record(for: heartRate)?.listeners.map(\.id) == [first, second, third])
        registry.setSubscribed(heartRate, subscription: FakeSubscription())
        let removedFirst = registry.remove(heartRate, listener: first)
        #expect(removedFirst?.listeners.map(\.id) == [first])
        #expect(removedFirst?.record == nil, "others still listen: the subscription stays")
        #expect(registry.record(for: heartRate)?.isSubscribed == true)
        #expect(registry.remove(heartRate, listener: first) == nil, "a listener ends once")
        #expect(registry.remove(heartRate, listener: second)?.record == nil)
        guard case .trapped = registry.admit(heartRate, handler: ignore, option: .shared) else {
            Issue.record("the oldest remaining listener traps")
            return
        }
        let last = registry.remove(heartRate, listener: third)
        #expect(last?.record?.isSubscribed == true, "the last listener takes the subscription with it")
        #expect(!registry.contains(heartRate))
    }

    @Test("Restored listens have no listener until the app installs one")
    func restored() {
        var registry = ListenRegistry()
        _ = registry.admit(location, handler: ignore, option: .trap)
        #expect(registry.addRestored([heartRate, location]) == [heartRate], "an existing listen is left alone")
        #expect(registry.record(for: heartRate)?.listeners.isEmpty == true)
        guard case let .replaced(previous, _) = registry.admit(heartRate, handler: ignore, option: .trap) else {
            Issue.record("the restored listen should take the handler")
            return
        }
        #expect(previous.isEmpty)
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
        #expect(!registry.contains(location), "a listen of synchronous listeners only ends")
        #expect(registry.toResubscribe == [heartRate])
        #expect(registry.persistable == [heartRate])
    }

    @Test("A dropped link ends a synchronous listener that joined shared ones, and keeps the others")
    func linkDropShared() {
        var registry = ListenRegistry()
        _ = registry.admit(heartRate, handler: ignore, option: .shared)
        _ = registry.admit(heartRate, handler: ignore, option: .trap, synchronous: true)
        let ended = registry.linkDidDrop()
        #expect(ended.count == 1)
        #expect(registry.record(for: heartRate)?.listeners.count == 1)
        #expect(registry.persistable == [heartRate])
    }
}

/// A subscription that only records its cancellation.
private final class FakeSubscription: ListenSubscription {
    private let cancelled = Mutex(false)
    var isCancelled: Bool { cancelled.withLock { $0 } }
    func cancel() { cancelled.withLock { $0 = true } }
}
