import BluetoothCore
import Synchronization
import Testing

@Suite("Request scopes, abort signals and one-shot continuations", .timeLimit(.minutes(1)))
struct RequestScopeTests {
    struct Stop: Error, Equatable { var tag = 0 }

    @Test func aNestedLimitNeverExtendsTheOuterOne() {
        let clock = ManualClock()
        let now = BluetoothClock.manual(clock).now
        let outer = RequestScope().limited(to: now + .seconds(5))
        #expect(outer.deadline == now + .seconds(5))
        #expect(outer.limited(to: now + .seconds(9)).deadline == now + .seconds(5))
        #expect(outer.limited(to: now + .seconds(2)).deadline == now + .seconds(2))
    }

    @Test func aLimitKeepsTheSignalAndASignalKeepsTheLimit() {
        let clock = ManualClock()
        let now = BluetoothClock.manual(clock).now
        let signal = AbortSignal()
        let scope = RequestScope().aborted(by: signal).limited(to: now + .seconds(1))
        #expect(scope.abort === signal)
        #expect(scope.aborted(by: AbortSignal()).deadline == now + .seconds(1))
    }

    @Test func theScopeIsTheTasks() async {
        let signal = AbortSignal()
        #expect(RequestScope.current.abort == nil && RequestScope.current.deadline == nil)
        await RequestScope.$current.withValue(RequestScope(abort: signal)) {
            #expect(RequestScope.current.abort === signal)
            await Task { #expect(RequestScope.current.abort === signal, "a child task inherits it") }.value
        }
    }

    @Test func anAbortCallsTheRegisteredHandlersOnceWithTheFirstError() {
        let signal = AbortSignal()
        let calls = Mutex<[Int]>([])
        let first = signal.whenAborted { error in calls.withLock { $0.append((error as? Stop)?.tag ?? -1) } }
        let removed = signal.whenAborted { _ in calls.withLock { $0.append(99) } }
        if let removed { signal.remove(removed) }
        #expect(first != nil && signal.error == nil)
        signal.abort(with: Stop(tag: 1))
        signal.abort(with: Stop(tag: 2))
        #expect(calls.withLock { $0 } == [1], "one call, with the first error; a removed handler is not called")
        #expect((signal.error as? Stop) == Stop(tag: 1))
        #expect(signal.whenAborted { _ in calls.withLock { $0.append(3) } } == nil, "a fired signal refuses registrations")
        #expect(calls.withLock { $0 } == [1])
    }

    @Test func aOneShotContinuationTakesTheFirstResumeSetBeforeOrAfterIt() async {
        let before = OneShotContinuation()
        before.resume(with: .failure(Stop(tag: 1)))
        before.resume(with: .success(()))
        await #expect(throws: Stop(tag: 1)) {
            try await withCheckedThrowingContinuation { before.set($0) }
        }

        let after = OneShotContinuation()
        let waiting = Task { try await withCheckedThrowingContinuation { after.set($0) } }
        after.resume(with: .success(()))
        after.resume(with: .failure(Stop(tag: 2)))
        await #expect(throws: Never.self) { try await waiting.value }
    }
}
