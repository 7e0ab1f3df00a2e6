// bluejay-rig-bench: Bluejay's central in the end-to-end benchmark (scripts/bench-rig.sh).
// The same workloads as Benchmarks/rig/bumble_central.py, through Bluejay's public `async`
// API, on a slot of Benchmarks/rig/radio.py (Bumble's virtual radio) over H4/TCP.
//
//     bluejay-rig-bench --port P --peer ADDR/random [--notify-small N] [--notify-large N]
//                       [--reads N] [--l2cap-bytes B] [--l2cap-echo-bytes B] [--scan-reports R]
//                       [--advertisers K] [--adv-interval-ms I] [--coalescing-ms W]
//
// --coalescing-ms sets the host's receive-coalescing window (HostConfiguration
// .receiveCoalescingWindow; 0 turns it off); without it the library's default applies.
//
// Protocol with the driver: a line on stdout with "cmd" is a command for the radio, answered
// by one line on stdin; a line with "workload" is a result (fields as in bumble_central.py).
// Logs go to stderr.
import Bluejay
import Foundation
import Glibc
import Logging

// The peer's database (Benchmarks/rig/radio.py).
let service = ServiceIdentifier(uuid: "5B1E0001-6A79-4B2C-9D3E-0F1A2B3C4D5E")
let notifying = CharacteristicIdentifier(uuid: "5B1E0002-6A79-4B2C-9D3E-0F1A2B3C4D5E", service: service)
let readable = CharacteristicIdentifier(uuid: "5B1E0003-6A79-4B2C-9D3E-0F1A2B3C4D5E", service: service)
let readWarmup = 20
// The peer's L2CAP channel servers and the values both clients open channels with (radio.py).
let l2capSinkPSM: UInt16 = 0x0081
let l2capEchoPSM: UInt16 = 0x0083
let l2capParameters = L2CAPChannelParameters(mtu: 2048, mps: 2048, initialCredits: 256)

struct Options {
    var port = 0
    var peer = ""
    var notifySmall = 5000
    var notifyLarge = 2000
    var reads = 1000
    var l2capBytes = 204_800
    var l2capEchoBytes = 204_800
    var scanReports = 5000
    var advertisers = 50
    var advertisingIntervalMs = 20.0
    var coalescingMs: Double?

    init(_ arguments: [String]) {
        var rest = arguments.makeIterator()
        while let option = rest.next() {
            let value = rest.next() ?? ""
            func number<T: LosslessStringConvertible>() -> T {
                guard let number = T(value) else { fail("\(option): not a number: \(value)") }
                return number
            }
            switch option {
            case "--port": port = number()
            case "--peer": peer = value
            case "--notify-small": notifySmall = number()
            case "--notify-large": notifyLarge = number()
            case "--reads": reads = number()
            case "--l2cap-bytes": l2capBytes = number()
            case "--l2cap-echo-bytes": l2capEchoBytes = number()
            case "--scan-reports": scanReports = number()
            case "--advertisers": advertisers = number()
            case "--adv-interval-ms": advertisingIntervalMs = number()
            case "--coalescing-ms": coalescingMs = number()
            default: fail("unknown option \(option)")
            }
        }
        if port == 0 || peer.isEmpty { fail("usage: bluejay-rig-bench --port P --peer ADDR/random [options]") }
    }
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("bluejay-rig-bench: \(message)\n".utf8))
    exit(1)
}

let clock = ContinuousClock()

/// User + system CPU time (every thread) and context switches of this process so far, and the time.
struct Snapshot {
    var cpu: Double
    var contextSwitches: Int
    var time: ContinuousClock.Instant

    static func now() -> Snapshot {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return Snapshot(cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime), contextSwitches: usage.ru_nvcsw + usage.ru_nivcsw,
                        time: clock.now)
    }
}

/// Nearest-rank p50, p90, p99 in microseconds (bumble_central.py computes them the same way).
func percentiles(_ samples: [Duration]) -> [Double] {
    let ordered = samples.sorted()
    return [50.0, 90.0, 99.0].map { p in
        let sample = ordered[max(0, Int((p / 100 * Double(ordered.count)).rounded(.up)) - 1)]
        return (sample.seconds * 1e7).rounded() / 10
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

/// The driver script at the other end of stdin and stdout.
enum Driver {
    /// Reads stdin on a thread of its own, off Swift's cooperative pool.
    static let stdinQueue = DispatchQueue(label: "driver.stdin")

    static func send(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object), let line = String(data: data, encoding: .utf8) else {
            fail("cannot encode \(object)")
        }
        FileHandle.standardOutput.write(Data((line + "\n").utf8))  // unbuffered: one write per line
    }

    /// The radio's answer to the last command.
    static func reply() async -> [String: Any] {
        let line: String? = await withCheckedContinuation { continuation in
            stdinQueue.async { continuation.resume(returning: readLine()) }
        }
        guard let line, let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            fail("no answer from the driver")
        }
        if object["event"] as? String == "error" { fail("radio: \(object["message"] ?? "")") }
        return object
    }

    static func radio(_ command: [String: Any]) async -> [String: Any] {
        send(command)
        return await reply()
    }

    static func radioStats() async -> [String: Any] {
        await radio(["cmd": "stats"])
    }

    static func result(_ workload: String, items: Double, from start: Snapshot, to end: Snapshot, radio: [[String: Any]],
                       latency: [Double]? = nil, extra: [String: Any] = [:]) {
        send(["workload": workload, "items": items, "cpu_s": end.cpu - start.cpu, "wall_s": start.time.duration(to: end.time).seconds,
              "context_switches": end.contextSwitches - start.contextSwitches,
              "latency_us": latency.map { $0 as Any } ?? NSNull(), "radio": radio].merging(extra) { old, _ in old })
    }
}

func notify(_ bluejay: Bluejay, size: Int, count: Int) async throws {
    let values: ValueStream<Data> = try await bluejay.listen(to: notifying)
    var iterator = values.makeAsyncIterator()
    let radio0 = await Driver.radioStats()
    let start = Snapshot.now()
    Driver.send(["cmd": "stream", "count": count, "size": size])
    for _ in 0..<count {
        guard let value = try await iterator.next() else { fail("the listen ended early") }
        if value.count != size { fail("a notification of \(value.count) bytes, not \(size)") }
    }
    let end = Snapshot.now()
    let streamed = await Driver.reply()
    if streamed["count"] as? Int != count { fail("the radio streamed \(streamed)") }
    let radio1 = await Driver.radioStats()
    try await bluejay.endListen(to: notifying)
    Driver.result("notify_\(size)B", items: Double(count), from: start, to: end, radio: [radio0, radio1])
}

func read(_ bluejay: Bluejay, count: Int) async throws {
    for _ in 0..<readWarmup {
        let _: Data = try await bluejay.read(from: readable)
    }
    var latencies: [Duration] = []
    latencies.reserveCapacity(count)
    var value = Data()
    let radio0 = await Driver.radioStats()
    let start = Snapshot.now()
    for _ in 0..<count {
        let began = clock.now
        value = try await bluejay.read(from: readable)
        latencies.append(began.duration(to: clock.now))
    }
    let end = Snapshot.now()
    let radio1 = await Driver.radioStats()
    if value.count != 20 { fail("read \(value.count) bytes, not 20") }
    Driver.result("read_20B", items: Double(count), from: start, to: end, radio: [radio0, radio1],
                  latency: percentiles(latencies))
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

func scan(_ bluejay: Bluejay, advertisers: Int, intervalMs: Double, reports: Int) async throws {
    _ = await Driver.radio(["cmd": "advertisers", "count": advertisers, "interval_ms": intervalMs])
    let radio0 = await Driver.radioStats()
    let start = Snapshot.now()
    // Every advertising report, as Bumble's filter_duplicates=False gives them (the virtual
    // radio's RSSI is always -50, so any RSSI throttle above 0 would report each advertiser once).
    var received = 0
    for try await event in bluejay.scan(allowDuplicates: true, throttleRSSIDelta: 0) {
        guard case .discovered = event else { continue }
        received += 1
        if received == reports { break }  // ends the iteration, which stops the scan
    }
    let end = Snapshot.now()
    if received != reports { fail("the scan ended after \(received) reports") }
    let radio1 = await Driver.radioStats()
    _ = await Driver.radio(["cmd": "stop_advertisers"])
    Driver.result("scan_\(advertisers)adv", items: Double(reports), from: start, to: end, radio: [radio0, radio1])
}

func run(_ options: Options) async {
    guard let peer = PeripheralIdentifier(string: options.peer) else { fail("not a peripheral: \(options.peer)") }
    var logger = Logger(label: "bluejay") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .warning
    let bluejay = Bluejay(logger: logger)
    var host = HostConfiguration()
    if let window = options.coalescingMs { host.receiveCoalescingWindow = .microseconds(Int64((window * 1000).rounded())) }
    bluejay.start(mode: .new(StartOptions(transport: .specification("tcp:127.0.0.1:\(options.port)"), hostConfiguration: host)))
    do {
        try await bluejay.waitUntilReady()
        try await bluejay.connect(peer, timeout: .seconds(15))  // exchanges ATT MTU 517 on connect
        for (size, count) in [(20, options.notifySmall), (244, options.notifyLarge)] where count > 0 {
            try await notify(bluejay, size: size, count: count)
        }
        if options.reads > 0 { try await read(bluejay, count: options.reads) }
        if options.l2capBytes > 0 { try await channelWorkload(bluejay, total: options.l2capBytes, echo: false) }
        if options.l2capEchoBytes > 0 { try await channelWorkload(bluejay, total: options.l2capEchoBytes, echo: true) }
        if options.scanReports > 0 {
            try await scan(bluejay, advertisers: options.advertisers, intervalMs: options.advertisingIntervalMs, reports: options.scanReports)
        }
        try await bluejay.disconnect()
    } catch {
        fail("\(error)")
    }
    await bluejay.stop()
}

await run(Options(Array(CommandLine.arguments.dropFirst())))
