import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// LE credit-based channels against Bumble's own (bumble/l2cap.py), through the rig plugin
    /// bumble/bluejay_l2cap.py: a channel each way, 100 kB both directions byte-exact, with
    /// credits run out and given back on both sides, on Bumble's controller and on Rootcanal.
    /// Throughput figures are printed, not asserted.
    @Suite("L2CAP credit-based channels against Bumble", .sharedRootcanal)
    struct L2CAPChannelInteropTests {
        static let plugin = ["--plugin", "bluejay_l2cap"]
        static let size = 100_000

        /// Byte i is (i * 31 + seed) mod 256, as in the plugin.
        static func pattern(_ size: Int, seed: Int) -> [UInt8] {
            (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) }
        }

        @Test("We open a channel to Bumble's echo server: 100 kB each way, credits exhausted and refilled", arguments: InteropController.allCases)
        func weOpenToBumble(on controller: InteropController) async throws {
            try await withBumbleRig(arguments: Self.plugin, controller: controller) { rig in
                // Bumble gives 4 credits of 64 bytes: each 512-byte SDU needs 9 K-frames, so our
                // sender waits for Bumble's credits over and over.
                _ = try await rig.request("l2cap_server", ["psm": 0x81, "mode": "echo", "mtu": 512, "mps": 64, "max_credits": 4])
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    // We give 20 credits of 64 bytes and read nothing at first: Bumble's echo must stop.
                    let channel = try await connection.openChannel(psm: 0x81, parameters: .init(mtu: 512, mps: 64, initialCredits: 20))
                    #expect(channel.peerMTU == 512 && channel.peerMPS == 64)
                    let data = Self.pattern(Self.size, seed: 7)
                    let meter = ThroughputMeter()
                    let writer = Task {
                        for start in stride(from: 0, to: data.count, by: 512) { try await channel.write(Array(data[start..<min(start + 512, data.count)])) }
                    }
                    try await waitUntil("Bumble's echo out of our credits", timeout: .seconds(30)) {
                        (try? await rig.request("l2cap_stats").int("credits")) == 0
                    }
                    // What waits for our reader is bounded by the credits we gave.
                    #expect(channel.statistics.framesReceived <= 20 && channel.unreadSDUCount <= 20)
                    var echoed: [UInt8] = []
                    while echoed.count < data.count { echoed += try await channel.read() }
                    try await writer.value
                    let figures = meter.stop(bytes: 2 * data.count)
                    #expect(echoed == data, "echo differs from byte \(zip(echoed, data).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? -1)")
                    let stats = try await rig.request("l2cap_stats", ["seed": 7, "size": Self.size])
                    #expect(stats.bool("matches") == true, "\(stats)")
                    let statistics = channel.statistics
                    #expect(statistics.creditStalls > 0 && statistics.framesSent > 4 * 100, "\(statistics)")
                    print("L2CAP throughput \(controller.testDescription), our central → Bumble echo → us (MTU 512, MPS 64, credits 4/20): \(figures)")
                    channel.close()
                    _ = try await rig.waitForEvent(named: "l2cap_closed")
                    #expect(channel.closure == .closedLocally)
                    try await connection.disconnect()
                }
            }
        }

        @Test("Bumble opens a channel to our server: 100 kB each way through our echo, small credits both sides",
              arguments: InteropController.allCases)
        func bumbleOpensToUs(on controller: InteropController) async throws {
            try await withBumbleRig(script: .central, arguments: Self.plugin, controller: controller) { central in
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    let (opened, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
                    let psm = try await manager.publishL2CAPChannel(parameters: .init(mtu: 256, mps: 100, initialCredits: 3)) {
                        continuation.yield($0)
                    }
                    #expect((0x80...0xFF).contains(psm))
                    try await manager.startAdvertising(name: "Bluejay L2CAP")
                    let address = try await #require(manager.host).publicAddressText
                    _ = try await central.request("connect", ["address": address, "address_type": "public", "discover": false])
                    let answer = try await central.request("l2cap_connect", ["psm": Int(psm), "mtu": 300, "mps": 64, "max_credits": 2, "mode": "sink"])
                    #expect(answer.bool("opened") == true && answer.int("peer_mtu") == 256 && answer.int("peer_mps") == 100, "\(answer)")
                    var channels = opened.makeAsyncIterator()
                    let channel = try #require(await channels.next())
                    #expect(channel.peerMTU == 300 && channel.peerMPS == 64)
                    // Our echo: every SDU back as it is (Bumble's MTU 300 > ours 256, so it fits).
                    let meter = ThroughputMeter()
                    let echo = Task {
                        for try await sdu in channel.sdus { try await channel.write(sdu) }
                    }
                    _ = try await central.request("l2cap_send", ["size": Self.size, "seed": 3], timeout: .seconds(120))
                    try await waitUntil("Bumble got the echo back", timeout: .seconds(60)) {
                        (try? await central.request("l2cap_stats").int("received")) == Self.size
                    }
                    let figures = meter.stop(bytes: 2 * Self.size)
                    let stats = try await central.request("l2cap_stats", ["seed": 3, "size": Self.size])
                    #expect(stats.bool("matches") == true, "\(stats)")
                    let statistics = channel.statistics
                    #expect(statistics.bytesReceived == Self.size && statistics.bytesSent == Self.size, "\(statistics)")
                    // Bumble gave 2 credits of 64 bytes: our echo waited for them again and again.
                    #expect(statistics.creditStalls > 0, "\(statistics)")
                    print("L2CAP throughput \(controller.testDescription), Bumble central → our peripheral echo → Bumble (MTU 256/300, credits 3/2): \(figures)")
                    _ = try await central.request("l2cap_close")
                    _ = await echo.result
                    #expect(channel.closure == .closedByPeer)
                    _ = try await central.request("disconnect")
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }

        @Test("Enhanced channels both ways: we open three to Bumble's server, Bumble opens two to ours")
        func enhancedChannels() async throws {
            try await withBumbleRig(arguments: Self.plugin) { rig in
                _ = try await rig.request("l2cap_server", ["psm": 0x83, "mode": "echo", "mtu": 256, "mps": 128, "max_credits": 8])
                try await withHost(on: rig) { host in
                    let connection = try await host.connect(to: try rig.peer)
                    let channels = try await connection.openEnhancedChannels(psm: 0x83, count: 3, parameters: .init(mtu: 256, mps: 64, initialCredits: 4))
                    #expect(channels.count == 3 && channels.allSatisfy { $0.isEnhanced && $0.peerMTU == 256 && $0.peerMPS == 128 })
                    for (index, channel) in channels.enumerated() {
                        let data = Self.pattern(2_000, seed: index)
                        for start in stride(from: 0, to: data.count, by: 200) { try await channel.write(Array(data[start..<min(start + 200, data.count)])) }
                        var echoed: [UInt8] = []
                        while echoed.count < data.count { echoed += try await channel.read() }
                        #expect(echoed == data, "channel \(index)")
                    }
                    channels.forEach { $0.close() }
                    try await connection.disconnect()
                }
            }
            try await using(try BumbleRig.start(script: .central, arguments: Self.plugin)) { central in
                try await central.waitForReady()
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    let (opened, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
                    let psm = try await manager.publishL2CAPChannel(parameters: .init(mtu: 256, mps: 100, initialCredits: 3)) { channel in
                        continuation.yield(channel)
                        Task { for try await sdu in channel.sdus { try await channel.write(sdu) } }
                    }
                    try await manager.startAdvertising(name: "Bluejay L2CAP")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public", "discover": false])
                    let answer = try await central.request("l2cap_connect", ["psm": Int(psm), "mtu": 300, "mps": 64, "max_credits": 2,
                                                                             "mode": "sink", "count": 2])
                    #expect(answer.bool("opened") == true && answer.int("count") == 2 && answer.int("peer_mtu") == 256, "\(answer)")
                    var accepted: [L2CAPChannel] = []
                    for await channel in opened {
                        accepted.append(channel)
                        if accepted.count == 2 { break }
                    }
                    #expect(accepted.allSatisfy { $0.isEnhanced && $0.peerMTU == 300 && $0.peerMPS == 64 })
                    _ = try await central.request("l2cap_send", ["size": 20_000, "seed": 5], timeout: .seconds(60))
                    try await waitUntil("Bumble got the echo back", timeout: .seconds(60)) {
                        (try? await central.request("l2cap_stats").int("received")) == 20_000
                    }
                    #expect(try await central.request("l2cap_stats", ["seed": 5, "size": 20_000]).bool("matches") == true)
                    _ = try await central.request("disconnect")
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }
}

/// Wall time and this process's CPU time (getrusage) over a transfer.
struct ThroughputMeter {
    private let start = ContinuousClock.now
    private let cpuStart = ThroughputMeter.cpuTime()

    static func cpuTime() -> Duration {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func duration(_ time: timeval) -> Duration { .seconds(Int64(time.tv_sec)) + .microseconds(Int64(time.tv_usec)) }
        return duration(usage.ru_utime) + duration(usage.ru_stime)
    }

    /// "N bytes in T s: R kB/s, CPU C s (P % of wall)".
    func stop(bytes: Int) -> String {
        let wall = ContinuousClock.now - start
        let cpu = Self.cpuTime() - cpuStart
        let seconds = wall / .seconds(1)
        let cpuSeconds = cpu / .seconds(1)
        return String(format: "%d bytes in %.2f s: %.1f kB/s, CPU %.2f s (%.0f %% of wall)", bytes, seconds,
                      Double(bytes) / seconds / 1000, cpuSeconds, cpuSeconds / seconds * 100)
    }
}
