import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Simulation state machines", .timeLimit(.minutes(1)))
struct StateMachineTests {
    @Test func timerQueueOrdersByDeadlineThenScheduling() {
        var timers = TimerQueue<String>()
        timers.schedule(at: .milliseconds(20), "c")
        timers.schedule(at: .milliseconds(10), "a")
        let cancelled = timers.schedule(at: .milliseconds(15), "x")
        timers.schedule(at: .milliseconds(10), "b")
        timers.cancel(cancelled)
        let first = timers.nextDeadline
        #expect(first == .milliseconds(10))
        var fired: [String] = []
        while let due = timers.popDue(at: .milliseconds(20)) { fired.append(due.payload) }
        #expect(fired == ["a", "b", "c"])
        #expect(timers.popDue(at: .seconds(100)) == nil)
        let last = timers.nextDeadline
        #expect(last == nil)
    }

    @Test func timerQueueKeepsLaterTimers() {
        var timers = TimerQueue<Int>()
        for value in (0..<50).reversed() { timers.schedule(at: .milliseconds(value), value) }
        var fired: [Int] = []
        while let due = timers.popDue(at: .milliseconds(24)) { fired.append(due.payload) }
        #expect(fired == Array(0...24))
        #expect(timers.count == 25)
        let next = timers.nextDeadline
        #expect(next == .milliseconds(25))
    }

    @Test func bufferPoolNeverReturnsMoreThanTaken() {
        var pool = ACLBufferPool(capacity: 3)
        let value1 = pool.take(handle: 1)
        #expect(value1)
        let value2 = pool.take(handle: 1)
        #expect(value2)
        let value3 = pool.take(handle: 2)
        #expect(value3)
        let value4 = pool.take(handle: 2)
        #expect(!value4, "a fourth packet exceeds the three buffers")
        pool.transmitted(handle: 1, count: 5)
        #expect(pool.available == 0, "freed buffers count as used until reported")
        let value5 = pool.takeCompleted(handle: 1)
        #expect(value5 == 2)
        let value6 = pool.takeCompleted(handle: 1)
        #expect(value6 == 0)
        #expect(pool.available == 2)
        pool.transmitted(handle: 9, count: 1)
        let value7 = pool.takeCompleted(handle: 9)
        #expect(value7 == 0, "nothing was taken on handle 9")
        pool.connectionClosed(handle: 2)
        #expect(pool.available == 3)
    }

    @Test func dataQueueFragmentsByDataLengthAndBudget() {
        var queue = LinkDataQueue()
        queue.enqueue(Array(0..<60), startsPDU: true)
        queue.enqueue(Array(100..<110), startsPDU: false)
        let first = queue.runEvent(at: .zero, budget: 2, maxOctets: 27)
        #expect(first.pdus.map(\.data.count) == [27, 27])
        #expect(first.pdus.map(\.startsPDU) == [true, false])
        #expect(first.completedPackets == 0)
        let second = queue.runEvent(at: .milliseconds(15), budget: 4, maxOctets: 27)
        #expect(second.pdus.map(\.data.count) == [6, 10])
        #expect(second.pdus.map(\.startsPDU) == [false, false])
        #expect(second.completedPackets == 2)
        #expect((first.pdus + second.pdus).prefix(3).flatMap(\.data) == Array(0..<60))
        #expect(queue.isEmpty)
    }

    @Test func lostPacketsAreRetransmittedInOrder() {
        var queue = LinkDataQueue()
        queue.addFault(.lose(attempts: 2), count: 1)
        queue.enqueue([1], startsPDU: true)
        queue.enqueue([2], startsPDU: true)
        let value8 = queue.runEvent(at: .zero, budget: 4, maxOctets: 27)
        #expect(value8.pdus.isEmpty)
        let value9 = queue.runEvent(at: .milliseconds(10), budget: 4, maxOctets: 27)
        #expect(value9.pdus.isEmpty)
        let third = queue.runEvent(at: .milliseconds(20), budget: 4, maxOctets: 27)
        #expect(third.pdus.map(\.data) == [[1], [2]])
        #expect(third.completedPackets == 2)
    }

    @Test func delayedPacketsHoldTheQueue() {
        var queue = LinkDataQueue()
        queue.addFault(.delay(.milliseconds(50)), count: 1)
        queue.enqueue([1], startsPDU: true)
        queue.enqueue([2], startsPDU: true)
        let value10 = queue.runEvent(at: .milliseconds(10), budget: 4, maxOctets: 27)
        #expect(value10.pdus.isEmpty)
        let value11 = queue.runEvent(at: .milliseconds(59), budget: 4, maxOctets: 27)
        #expect(value11.pdus.isEmpty)
        let value12 = queue.runEvent(at: .milliseconds(60), budget: 4, maxOctets: 27)
        #expect(value12.pdus.map(\.data) == [[1], [2]])
    }

    @Test func droppedPacketsVanishButCountAsSent() {
        var queue = LinkDataQueue()
        queue.addFault(.drop, count: 1)
        queue.enqueue([1], startsPDU: true)
        queue.enqueue([2], startsPDU: true)
        let result = queue.runEvent(at: .zero, budget: 4, maxOctets: 27)
        #expect(result.pdus.map(\.data) == [[2]])
        #expect(result.completedPackets == 2)
        #expect(result.droppedPackets == 1)
        #expect(queue.pendingFaultCount == 0)
    }

    @Test func duplicateFilterReportsEachKindOnce() {
        var filter = DuplicateFilter()
        let advertiser = DeviceAddress(TestAddresses.peripheral, type: .public)
        let value13 = filter.admit(advertiser, isScanResponse: false)
        #expect(value13)
        let value14 = filter.admit(advertiser, isScanResponse: false)
        #expect(!value14)
        let value15 = filter.admit(advertiser, isScanResponse: true)
        #expect(value15)
        let value16 = filter.admit(DeviceAddress(TestAddresses.peripheral, type: .random), isScanResponse: false)
        #expect(value16)
        filter.reset()
        let value17 = filter.admit(advertiser, isScanResponse: false)
        #expect(value17)
    }

    @Test func scanScheduleListensDuringTheWindow() {
        let schedule = ScanSchedule(start: .milliseconds(100), interval: .milliseconds(60), window: .milliseconds(30))
        #expect(!schedule.isListening(at: .milliseconds(99)))
        #expect(schedule.isListening(at: .milliseconds(100)))
        #expect(schedule.isListening(at: .milliseconds(129)))
        #expect(!schedule.isListening(at: .milliseconds(130)))
        #expect(!schedule.isListening(at: .milliseconds(159)))
        #expect(schedule.isListening(at: .milliseconds(160)))
        let continuous = ScanSchedule(start: .zero, interval: .milliseconds(60), window: .milliseconds(60))
        #expect(continuous.isListening(at: .milliseconds(45)))
    }

    @Test func clockScalesAndRebasesWithoutJumps() {
        let start = ContinuousClock.now
        var clock = LinkClock(timeScale: 10, realNow: start)
        #expect(clock.simulatedTime(at: start + .milliseconds(100)) == .seconds(1))
        #expect(clock.realInstant(for: .seconds(2)) == start + .milliseconds(200))
        clock.setTimeScale(1, at: start + .milliseconds(100))
        #expect(clock.simulatedTime(at: start + .milliseconds(100)) == .seconds(1))
        #expect(clock.simulatedTime(at: start + .milliseconds(600)) == .milliseconds(1500))
    }

    @Test func freeSpacePathLoss() {
        let model = RadioModel()
        #expect(model.pathLoss(distance: 1) == 40)
        #expect(abs(model.pathLoss(distance: 10) - 60) < 1e-9)
        #expect(abs(model.pathLoss(distance: 100) - 80) < 1e-9)
        #expect(model.pathLoss(distance: 0) == model.pathLoss(distance: 0.1))
        #expect(abs(model.distance(forPathLoss: 90) - 316.2) < 0.1)
    }

    @Test func connectionParameterRanges() {
        #expect(ParameterRanges.connection(intervalMin: 12, intervalMax: 24, latency: 0, timeout: 500))
        #expect(!ParameterRanges.connection(intervalMin: 24, intervalMax: 12, latency: 0, timeout: 500))
        #expect(!ParameterRanges.connection(intervalMin: 5, intervalMax: 12, latency: 0, timeout: 500))
        // 100 ms timeout vs (1 + 3) × 30 ms × 2 = 240 ms: too short.
        #expect(!ParameterRanges.connection(intervalMin: 24, intervalMax: 24, latency: 3, timeout: 10))
        #expect(ParameterRanges.legacyScan(interval: 0x60, window: 0x30))
        #expect(!ParameterRanges.legacyScan(interval: 0x30, window: 0x60))
    }

    @Test func supportedCommandsAreExactlyTheImplementedOnes() {
        let bitmap = ControllerCapabilities.supportedCommands
        for (type, bit) in ControllerCapabilities.commands {
            if let bit { #expect(bitmap.contains(bit), "\(type.name) is implemented but not advertised") }
        }
        let bits = ControllerCapabilities.commands.compactMap(\.bit)
        let setBits = bitmap.octets.map { $0.nonzeroBitCount }.reduce(0, +)
        #expect(setBits == bits.count)
        #expect(bitmap.contains(.leEnableEncryption))
        #expect(bitmap.contains(.leLongTermKeyRequestReply))
        #expect(bitmap.contains(.leLongTermKeyRequestNegativeReply))
    }
}
