import Bluejay
import Foundation

/// Streams `count` numbered notifications of `size` bytes (one every `intervalMs`, or as fast
/// as the radio goes when 0) and checks every one (``StreamCheck``): the result carries the
/// counts, and the latency from the radio's send time to the app. Measured from the stream
/// command to the last missing value. Returns whether the stream arrived whole.
func notify(_ central: any Central, size: Int, count: Int, intervalMs: Double) async throws -> Bool {
    let check = StreamCheck(count: count, size: size)
    try await central.listen(check)
    let radio0 = await Driver.radioStats()
    let start = Snapshot.now()
    Driver.send(["cmd": "stream", "count": count, "size": size, "interval_ms": intervalMs])
    let streamed = await Driver.reply()
    _ = await check.waitUntilComplete(timeout: streamGrace)
    let radio1 = await Driver.radioStats()
    try await central.endListen()
    let report = check.report(streamed: streamed)
    let passed = StreamCheck.passed(report)
    let name = "notify_\(size)B" + (intervalMs > 0 ? "_every\(intervalMs.formatted())ms" : "")
    Driver.result(name, items: Double(count), from: start, to: check.end ?? Snapshot.now(), radio: [radio0, radio1],
                  latency: check.latencyPercentiles, extra: ["check": report, "ok": passed])
    if !passed { FileHandle.standardError.write(Data("bluejay-rig-bench: \(name): the stream check failed: \(report)\n".utf8)) }
    return passed
}

extension Double {
    /// "10", "2.5": as Python's `f'{x:g}'` prints it, for workload names both centrals share.
    func formatted() -> String {
        self == rounded() ? String(Int(self)) : String(self)
    }
}

func read(_ central: any Central, count: Int) async throws {
    _ = try await central.reads(readWarmup)
    let radio0 = await Driver.radioStats()
    let run = try await central.reads(count)
    let radio1 = await Driver.radioStats()
    if run.last.count != 20 { fail("read \(run.last.count) bytes, not 20") }
    Driver.result("read_20B", items: Double(count), from: run.start, to: run.end, radio: [radio0, radio1],
                  latency: percentiles(run.latencies))
}

/// Writes `total` bytes in SDUs of the peer's MTU on a channel to the sink (or echo) PSM, as an
/// app would: one `write` after the other, each returning once its K-frames are handed to the
/// controller. Measured from the first write to the peer's confirmation that all arrived (or,
/// echoing, to the last byte read back). Items are KiB: µs/item is µs per KiB.
func channelWorkload(_ bluejay: Bluejay, total: Int, echo: Bool) async throws {
    let channel = try await bluejay.openL2CAPChannel(psm: echo ? l2capEchoPSM : l2capSinkPSM, parameters: l2capParameters)
    let sdu = [UInt8](repeating: 0, count: channel.peerMTU)
    let radio0 = await Driver.radioStats()
    let start = Snapshot.now()
    if !echo { Driver.send(["cmd": "l2cap_received", "bytes": total]) }
    // Reads the echo while the writes go out.
    async let echoed: Int = echo ? readBack(channel, total: total) : 0
    var sent = 0
    while sent < total {
        let size = min(sdu.count, total - sent)
        try await channel.write(size == sdu.count ? sdu : Array(sdu.prefix(size)))
        sent += size
    }
    let end: Snapshot
    if echo {
        let received = try await echoed
        end = Snapshot.now()
        if received != total { fail("read back \(received) bytes, not \(total)") }
    } else {
        let received = await Driver.reply()
        end = Snapshot.now()
        if received["bytes"] as? Int != total { fail("the peer received \(received)") }
    }
    let radio1 = await Driver.radioStats()
    // Left open until the link ends, as in bumble_central.py: Bumble's peer never frees a
    // closed channel's source CID, and would refuse the next channel that reuses it.
    Driver.result(echo ? "l2cap_echo" : "l2cap_sink", items: Double(total) / 1024, from: start, to: end, radio: [radio0, radio1],
                  extra: ["bytes": total])
}

/// Reads SDUs until `total` bytes came back.
func readBack(_ channel: L2CAPChannel, total: Int) async throws -> Int {
    var received = 0
    while received < total { received += try await channel.read().count }
    return received
}

func scan(_ central: any Central, advertisers: Int, intervalMs: Double, reports: Int) async throws {
    _ = await Driver.radio(["cmd": "advertisers", "count": advertisers, "interval_ms": intervalMs])
    let radio0 = await Driver.radioStats()
    let run = try await central.scan(reports: reports)
    if run.received != reports { fail("the scan ended after \(run.received) reports") }
    let radio1 = await Driver.radioStats()
    _ = await Driver.radio(["cmd": "stop_advertisers"])
    Driver.result("scan_\(advertisers)adv", items: Double(reports), from: run.start, to: run.end, radio: [radio0, radio1])
}
