import Bluejay
import Foundation
import Glibc

// The peer's database (Benchmarks/rig/radio.py).
let service = ServiceIdentifier(uuid: "5B1E0001-6A79-4B2C-9D3E-0F1A2B3C4D5E")
let notifying = CharacteristicIdentifier(uuid: "5B1E0002-6A79-4B2C-9D3E-0F1A2B3C4D5E", service: service)
let readable = CharacteristicIdentifier(uuid: "5B1E0003-6A79-4B2C-9D3E-0F1A2B3C4D5E", service: service)
let readWarmup = 20
// The peer's L2CAP channel servers and the values both clients open channels with (radio.py).
let l2capSinkPSM: UInt16 = 0x0081
let l2capEchoPSM: UInt16 = 0x0083
let l2capParameters = L2CAPChannelParameters(mtu: 2048, mps: 2048, initialCredits: 256)
/// How long a stream's last values may take to arrive after the radio says it sent them all.
let streamGrace: Duration = .seconds(5)

/// Which of Bluejay's two APIs the central is written with.
enum API: String {
    /// `try await bluejay.read(from:)`, `for try await value in try await bluejay.listen(to:)`.
    case async
    /// The API of the seed READMEs: `bluejay.read(from:) { result in … }`,
    /// `bluejay.listen(to:) { result in … }`, each callback on Bluejay's callback queue.
    case callbacks
}

struct Options {
    var port = 0
    var peer = ""
    var api = API.async
    var notifySmall = 5000
    var notifyLarge = 2000
    var notifySlow = 300
    var notifySlowIntervalMs = 10.0
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
            case "--api":
                guard let api = API(rawValue: value) else { fail("--api: async or callbacks, not \(value)") }
                self.api = api
            case "--notify-small": notifySmall = number()
            case "--notify-large": notifyLarge = number()
            case "--notify-slow": notifySlow = number()
            case "--notify-slow-interval-ms": notifySlowIntervalMs = number()
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
struct Snapshot: Sendable {
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
    var seconds: Double { self / .seconds(1) }
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
