import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// Credit-based channels between two of our hosts on the virtual link: both roles, data both
/// ways with credits running out and coming back, refusals, closes and link loss.
@Suite("Host: L2CAP credit-based channels", .timeLimit(.minutes(1)))
struct L2CAPChannelEndToEndTests {
    /// The peripheral's host listens on `psm`; the central opens a channel to it. Returns both ends.
    private func openPair(_ pair: HostPair, psm: UInt16 = 0x0080, server: L2CAPChannelParameters, client: L2CAPChannelParameters)
        async throws -> (central: L2CAPChannel, peripheral: L2CAPChannel, links: (central: Connection, peripheral: Connection)) {
        let (stream, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
        let registered = try await pair.peripheral.listen(psm: psm, parameters: server) { continuation.yield($0) }
        #expect(registered.psm == psm)
        let links = try await pair.connect()
        let channel = try await pair.central.openChannel(psm: psm, on: links.central, parameters: client)
        let accepted = try await withTimeout("the accepted channel") {
            for await channel in stream { return channel }
            throw TestTimeout(description: "no channel")
        }
        return (channel, accepted, links)
    }

    /// SDUs of `count` bytes each with a position-dependent pattern.
    private func payload(_ total: Int, seed: UInt8) -> [UInt8] {
        (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    @Test func dataMovesBothWaysByteExactWithCreditsExhaustedAndRefilled() async throws {
        let pair = try await HostPair.make()
        // Small credits and MPS on both sides: each SDU is several K-frames, the sender runs dry.
        let (central, peripheral, _) = try await openPair(
            pair, server: .init(mtu: 300, mps: 40, initialCredits: 3), client: .init(mtu: 500, mps: 23, initialCredits: 2))
        #expect(central.peerMTU == 300 && peripheral.peerMTU == 500)
        #expect(central.psm == 0x0080 && central.remoteCID == peripheral.localCID && peripheral.remoteCID == central.localCID)

        let upstream = payload(6_000, seed: 1)
        let downstream = payload(6_000, seed: 2)
        let written = Atomic<Int>(0)
        // The central writes while the peripheral reads nothing: its writes must stall on credits.
        let writer = Task {
            for chunk in upstream.chunked(300) {
                try await central.write(chunk)
                written.add(1, ordering: .relaxed)
            }
        }
        try await waitUntil("the central out of credits") { central.sendCredits == 0 }
        let stalledAt = written.load(ordering: .relaxed)
        #expect(stalledAt < upstream.count / 300)
        let peripheralWriter = Task {
            for chunk in downstream.chunked(500) { try await peripheral.write(chunk) }
        }
        var received: [UInt8] = []
        while received.count < upstream.count { received += try await peripheral.read() }
        var back: [UInt8] = []
        while back.count < downstream.count { back += try await central.read() }
        try await writer.value
        try await peripheralWriter.value
        #expect(received == upstream)
        #expect(back == downstream)

        // Closing on one side ends the other side's sequence in order.
        central.close()
        var leftover = 0
        for try await _ in peripheral.sdus { leftover += 1 }
        #expect(leftover == 0)
        #expect(peripheral.closure == .closedByPeer)
        await #expect(throws: L2CAPChannelError.closedLocally) { try await central.write([1]) }
        await pair.shutdown()
    }

    @Test func enhancedRequestsOpenSeveralChannelsAtOnce() async throws {
        let pair = try await HostPair.make()
        let (stream, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
        _ = try await pair.peripheral.listen(psm: 0x0090, parameters: .init(mtu: 128, mps: 64, initialCredits: 2)) { continuation.yield($0) }
        let links = try await pair.connect()
        let opened = try await links.central.openEnhancedChannels(psm: 0x0090, count: 3, parameters: .init(mtu: 100, mps: 64, initialCredits: 2))
        #expect(opened.count == 3 && opened.allSatisfy { $0.isEnhanced && $0.peerMTU == 128 && $0.peerMPS == 64 })
        var accepted: [L2CAPChannel] = []
        for await channel in stream {
            accepted.append(channel)
            if accepted.count == 3 { break }
        }
        // Each channel carries its own data.
        for (index, channel) in opened.enumerated() { try await channel.write([UInt8(index)] + [UInt8](repeating: 0xEE, count: 120)) }
        for channel in accepted {
            let sdu = try await channel.read()
            let sender = try #require(opened.first { $0.localCID == channel.remoteCID })
            #expect(sdu.count == 121 && Int(sdu[0]) == opened.firstIndex { $0 === sender })
        }
        await #expect(throws: L2CAPChannelError.refused(.spsmNotSupported)) {
            _ = try await links.central.openEnhancedChannels(psm: 0x0091, count: 2, parameters: .init(mtu: 100, mps: 64, initialCredits: 2))
        }
        await #expect(throws: L2CAPChannelError.self) { _ = try await links.central.openEnhancedChannels(psm: 0x0090, count: 6) }
        await pair.shutdown()
    }

    @Test func refusalsCarryTheSpecResult() async throws {
        let pair = try await HostPair.make()
        _ = try await pair.peripheral.listen(psm: 0x0081, security: .encrypted) { _ in }
        let links = try await pair.connect()
        await #expect(throws: L2CAPChannelError.refused(.spsmNotSupported)) {
            _ = try await links.central.openChannel(psm: 0x0099)
        }
        await #expect(throws: L2CAPChannelError.refused(.insufficientAuthentication)) {
            _ = try await links.central.openChannel(psm: 0x0081)
        }
        await #expect(throws: L2CAPChannelError.psmInUse(0x0081)) {
            _ = try await pair.peripheral.listen(psm: 0x0081) { _ in }
        }
        // A dynamic PSM is chosen when none is given.
        let dynamic = try await pair.peripheral.listen { _ in }
        #expect((0x80...0xFF).contains(dynamic.psm) && dynamic.psm != 0x0081)
        await #expect(throws: L2CAPChannelError.self) { _ = try await links.central.openChannel(psm: 0x0100) }
        await pair.shutdown()
    }

    @Test func tooLongSDUsAreRefusedBeforeSending() async throws {
        let pair = try await HostPair.make()
        let (central, _, _) = try await openPair(pair, server: .init(mtu: 64, mps: 64, initialCredits: 4), client: .init())
        await #expect(throws: L2CAPChannelError.sduTooLong(length: 65, mtu: 64)) { try await central.write([UInt8](repeating: 0, count: 65)) }
        await pair.shutdown()
    }

    @Test func linkLossFailsReadsAndWritesWithTheReasonAfterWhatArrived() async throws {
        let pair = try await HostPair.make()
        // The central gives one credit and reads nothing: the peripheral's second SDU waits.
        let (central, peripheral, links) = try await openPair(
            pair, server: .init(mtu: 100, mps: 100, initialCredits: 4), client: .init(mtu: 100, mps: 100, initialCredits: 1))
        try await peripheral.write([2])
        let stalled = Task { try await peripheral.write([3]) }
        try await waitUntil("the first SDU at the central") { central.unreadSDUCount == 1 }
        #expect(peripheral.sendCredits == 0)
        try await links.central.disconnect()
        // What arrived before the link ended is still read, then the reason.
        #expect(try await central.read() == [2])
        await #expect(throws: L2CAPChannelError.disconnected(reason: .connectionTerminatedByLocalHost)) { try await central.read() }
        await #expect(throws: L2CAPChannelError.disconnected(reason: .remoteUserTerminatedConnection)) { try await stalled.value }
        #expect(peripheral.closure == .disconnected(reason: .remoteUserTerminatedConnection))
        #expect(links.central.channels.isEmpty)
        await #expect(throws: L2CAPChannelError.disconnected(reason: .connectionTerminatedByLocalHost)) { try await central.write([1]) }
        await pair.shutdown()
    }

    @Test func manySmallSDUsKeepTheirOrderWithOneCredit() async throws {
        let pair = try await HostPair.make()
        let (central, peripheral, _) = try await openPair(
            pair, server: .init(mtu: 100, mps: 100, initialCredits: 1), client: .init(mtu: 100, mps: 100, initialCredits: 1))
        let writer = Task { for index in 0..<60 { try await central.write([UInt8(truncatingIfNeeded: index), UInt8(index >> 8)]) } }
        var order: [Int] = []
        for try await sdu in peripheral.sdus {
            order.append(Int(sdu[0]) | Int(sdu[1]) << 8)
            if order.count == 60 { break }
        }
        try await writer.value
        #expect(order == Array(0..<60))
        await pair.shutdown()
    }
}

extension Array {
    /// The array cut into pieces of at most `size` elements.
    func chunked(_ size: Int) -> [[Element]] {
        stride(from: 0, to: count, by: size).map { Array(self[$0..<Swift.min($0 + size, count)]) }
    }
}

/// Throughput of a channel between two of our hosts on the virtual link (printed, not
/// asserted: the figures depend on the machine and the link's simulated timing).
@Suite("Host: L2CAP channel throughput on the virtual link", .timeLimit(.minutes(1)))
struct L2CAPChannelThroughputTests {
    @Test func measureOneWayThroughput() async throws {
        let pair = try await HostPair.make()
        let (stream, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
        _ = try await pair.peripheral.listen(psm: 0x0080) { continuation.yield($0) }
        let links = try await pair.connect()
        let central = try await pair.central.openChannel(psm: 0x0080, on: links.central)
        var iterator = stream.makeAsyncIterator()
        let peripheral = try #require(await iterator.next())
        let data = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let start = ContinuousClock.now
        let cpuStart = processCPUTime()
        let writer = Task { for chunk in data.chunked(central.peerMTU) { try await central.write(chunk) } }
        var received: [UInt8] = []
        while received.count < data.count { received += try await peripheral.read() }
        try await writer.value
        let wall = ContinuousClock.now - start
        let cpu = processCPUTime() - cpuStart
        #expect(received == data)
        let seconds = wall / .seconds(1)
        let cpuSeconds = cpu / .seconds(1)
        print(String(format: "L2CAP virtual link (MTU %d, MPS 2048, 32 credits): %d bytes in %.2f s, %.1f kB/s, CPU %.2f s (both hosts and the link)",
                     central.peerMTU, data.count, seconds, Double(data.count) / seconds / 1000, cpuSeconds))
        await pair.shutdown()
    }
}

/// This process's user and system CPU time (getrusage).
func processCPUTime() -> Duration {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
    return duration(usage.ru_utime) + duration(usage.ru_stime)
}
