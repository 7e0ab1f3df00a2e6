@testable import Bluejay
import Testing

@Suite("Auto-reconnect rules", .timeLimit(.minutes(1)))
struct AutoReconnectPolicyTests {
    @Test("On by default; an unexpected disconnection reconnects")
    func unexpected() {
        var policy = AutoReconnectPolicy()
        #expect(policy.shouldAutoReconnect)
        policy.didConnect()
        let drop = policy.linkDidDrop()
        #expect(drop == .init(isExpected: false, willReconnect: true))
        let reconnect = policy.apply(nil)
        #expect(reconnect)
    }

    @Test("A successful manual disconnection turns it off; the next connection turns it on")
    func manual() {
        var policy = AutoReconnectPolicy()
        policy.didConnect()
        policy.disconnectionWasRequested()
        let drop = policy.linkDidDrop()
        #expect(drop == .init(isExpected: true, willReconnect: false))
        #expect(!policy.shouldAutoReconnect)
        let reconnect = policy.apply(nil)
        #expect(!reconnect)
        policy.didConnect()
        #expect(policy.shouldAutoReconnect)
        let next = policy.linkDidDrop()
        #expect(next == .init(isExpected: false, willReconnect: true), "the request was used up")
    }

    @Test("A disconnection request that found nothing to disconnect changes nothing")
    func unsuccessful() {
        var policy = AutoReconnectPolicy()
        policy.disconnectionWasRequested()
        policy.requestedDisconnectionDidNotHappen()
        #expect(policy.shouldAutoReconnect)
        let drop = policy.linkDidDrop()
        #expect(!drop.isExpected)
    }

    @Test("The disconnect handler overrides the decision either way")
    func handler() {
        var policy = AutoReconnectPolicy()
        policy.didConnect()
        _ = policy.linkDidDrop()
        let off = policy.apply(.change(shouldAutoReconnect: false))
        #expect(!off)
        #expect(!policy.shouldAutoReconnect)
        policy.disconnectionWasRequested()
        _ = policy.linkDidDrop()
        let on = policy.apply(.change(shouldAutoReconnect: true))
        #expect(on, "even after an expected disconnection")
        let unchanged = policy.apply(.noChange)
        #expect(unchanged)
    }

    @Test("A reconnection attempt that times out ends the attempts; other failures count as unexpected disconnections")
    func attempts() {
        var policy = AutoReconnectPolicy()
        let timedOut = policy.reconnectAttemptFailed(timedOut: true)
        #expect(timedOut == nil)
        let failed = policy.reconnectAttemptFailed(timedOut: false)
        #expect(failed == .init(isExpected: false, willReconnect: true))
        _ = policy.apply(.change(shouldAutoReconnect: false))
        let failedAgain = policy.reconnectAttemptFailed(timedOut: false)
        #expect(failedAgain == .init(isExpected: false, willReconnect: false))
    }

    @Test("Abandoning a connection attempt on request turns it off")
    func abandon() {
        var policy = AutoReconnectPolicy()
        policy.attemptWasAbandonedOnRequest()
        #expect(!policy.shouldAutoReconnect)
    }

    @Test("Retry limits: timeout retries count timeouts in a row (a connection gives them back), disconnect retries count for the whole request")
    func retryLimits() {
        var policy = AutoReconnectPolicy()
        var retried = policy.retryAfterTimeout()
        #expect(!retried, "without limits a timeout is not retried")
        #expect(policy.mayReconnectAfterDisconnection)
        policy.useRetryLimits(.init(timeouts: 2, disconnections: 1))
        let first = policy.retryAfterTimeout()
        let second = policy.retryAfterTimeout()
        let third = policy.retryAfterTimeout()
        #expect(first && second && !third, "two timeout retries, then none")
        policy.didConnect()
        retried = policy.retryAfterTimeout()
        #expect(retried, "a connection gives the timeout retries back")

        let drop = policy.linkDidDrop()
        #expect(drop == .init(isExpected: false, willReconnect: true))
        policy.reconnectionStarts()
        policy.didConnect()
        let secondDrop = policy.linkDidDrop()
        #expect(secondDrop == .init(isExpected: false, willReconnect: false), "the one disconnect retry is used up")
        #expect(!policy.mayReconnectAfterDisconnection)

        policy.useRetryLimits(nil)
        #expect(policy.mayReconnectAfterDisconnection, "a plain connect goes back to Bluejay's rules")
        policy.useRetryLimits(.init(timeouts: -3, disconnections: -1))
        retried = policy.retryAfterTimeout()
        #expect(!retried && !policy.mayReconnectAfterDisconnection, "negative limits count as none")
    }
}
