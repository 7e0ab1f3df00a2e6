import Testing
import BluetoothHost

private func request(_ min: UInt16, _ max: UInt16, latency: UInt16, timeout: UInt16) -> L2CAPConnectionParameterUpdateRequest {
    L2CAPConnectionParameterUpdateRequest(intervalMin: min, intervalMax: max, peripheralLatency: latency, timeoutMultiplier: timeout)
}

@Suite(.timeLimit(.minutes(1))) struct L2CAPConnectionParameterValidationTests {
    @Test func typicalAndBoundaryRequestsAreValid() {
        #expect(request(24, 40, latency: 0, timeout: 42).isValid)
        // The smallest values: 7.5 ms interval, 100 ms timeout.
        #expect(request(6, 6, latency: 0, timeout: 10).violations.isEmpty)
        // The largest: 4 s interval, latency 2, 32 s timeout (32 s > 3 × 4 s × 2).
        #expect(request(3200, 3200, latency: 2, timeout: 3200).violations.isEmpty)
    }

    @Test func intervalsOutOfRange() {
        #expect(request(5, 40, latency: 0, timeout: 400).violations == [.intervalMinOutOfRange(5)])
        #expect(request(24, 3201, latency: 0, timeout: 3200).violations == [.intervalMaxOutOfRange(3201)])
        #expect(request(40, 24, latency: 0, timeout: 400).violations == [.intervalMinAboveMax(min: 40, max: 24)])
    }

    @Test func latencyAndTimeoutOutOfRange() {
        #expect(request(6, 6, latency: 500, timeout: 3200).violations == [.peripheralLatencyOutOfRange(500)])
        #expect(request(6, 6, latency: 499, timeout: 3200).isValid)
        #expect(request(6, 6, latency: 0, timeout: 9).violations == [.timeoutOutOfRange(9)])
        #expect(request(6, 6, latency: 0, timeout: 3201).violations == [.timeoutOutOfRange(3201)])
    }

    @Test func timeoutMustExceedTwiceTheEffectiveInterval() {
        // 32 s is not larger than (1 + 3) × 4 s × 2 = 32 s: rejected (Vol 4, Part E, 7.8.12).
        #expect(request(3200, 3200, latency: 3, timeout: 3200).violations
            == [.timeoutTooShort(timeoutMultiplier: 3200, peripheralLatency: 3, intervalMax: 3200)])
        // 100 ms vs (1 + 0) × 50 ms × 2 = 100 ms: rejected; 110 ms: accepted.
        #expect(!request(40, 40, latency: 0, timeout: 10).isValid)
        #expect(request(40, 40, latency: 0, timeout: 11).isValid)
    }
}
