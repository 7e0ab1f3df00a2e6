// bluejay-rig-bench: Bluejay's central in the end-to-end benchmark (scripts/bench-rig.sh).
// The same workloads as Benchmarks/rig/bumble_central.py, through Bluejay's public API (the
// `async` one, or with --api callbacks the callback API of the seed READMEs), on a slot of
// Benchmarks/rig/radio.py (Bumble's virtual radio) over H4/TCP.
//
//     bluejay-rig-bench --port P --peer ADDR/random [--api async|callbacks] [--notify-small N]
//                       [--notify-large N] [--notify-slow N] [--notify-slow-interval-ms I]
//                       [--reads N] [--l2cap-bytes B] [--l2cap-echo-bytes B] [--scan-reports R]
//                       [--advertisers K] [--adv-interval-ms I] [--coalescing-ms W]
//
// --coalescing-ms sets the host's receive-coalescing window (HostConfiguration
// .receiveCoalescingWindow; 0 turns it off); without it the library's default applies.
// The channel workloads need --api async: an L2CAPChannel's reads and writes are `async` only.
//
// Protocol with the driver: a line on stdout with "cmd" is a command for the radio, answered
// by one line on stdin; a line with "workload" is a result (fields as in bumble_central.py).
// Logs go to stderr. Every streamed notification is checked (StreamCheck); a stream that did
// not arrive whole is reported, then the process exits 1.
import Bluejay
import Logging

func run(_ options: Options) async {
    guard let peer = PeripheralIdentifier(string: options.peer) else { fail("not a peripheral: \(options.peer)") }
    if options.api == .callbacks, options.l2capBytes > 0 || options.l2capEchoBytes > 0 {
        fail("the channel workloads need --api async (an L2CAPChannel's reads and writes are async only)")
    }
    var logger = Logger(label: "bluejay") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .warning
    let bluejay = Bluejay(logger: logger)
    var host = HostConfiguration()
    if let window = options.coalescingMs { host.receiveCoalescingWindow = .microseconds(Int64((window * 1000).rounded())) }
    bluejay.start(mode: .new(StartOptions(transport: .specification("tcp:127.0.0.1:\(options.port)"), hostConfiguration: host)))
    let central: any Central = options.api == .async ? AsyncCentral(bluejay) : CallbackCentral(bluejay)
    var passed = true
    do {
        try await bluejay.waitUntilReady()
        try await central.connect(peer)  // exchanges ATT MTU 517 on connect
        let streams = [(20, options.notifySmall, 0.0), (244, options.notifyLarge, 0.0), (20, options.notifySlow, options.notifySlowIntervalMs)]
        for (size, count, interval) in streams where count > 0 {
            if try await !notify(central, size: size, count: count, intervalMs: interval) { passed = false }
        }
        if options.reads > 0 { try await read(central, count: options.reads) }
        if options.l2capBytes > 0 { try await channelWorkload(bluejay, total: options.l2capBytes, echo: false) }
        if options.l2capEchoBytes > 0 { try await channelWorkload(bluejay, total: options.l2capEchoBytes, echo: true) }
        if options.scanReports > 0 {
            try await scan(central, advertisers: options.advertisers, intervalMs: options.advertisingIntervalMs, reports: options.scanReports)
        }
        try await central.disconnect()
    } catch {
        fail("\(error)")
    }
    await bluejay.stop()
    if !passed { fail("a stream did not arrive whole (see its check above)") }
}

await run(Options(Array(CommandLine.arguments.dropFirst())))
