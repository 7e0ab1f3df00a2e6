import BenchmarkSupport
import Foundation

/// bluejay-compare: Bluejay's half of `scripts/bench-compare.sh`.
///
///     bluejay-compare generate DIR                 write the shared corpus
///     bluejay-compare run DIR [--seconds S] [--only a,b]   measure, print JSON on stdout
///
/// Each operation runs one warm-up batch, then whole batches until at least S seconds
/// (default 0.3) have passed; it reports items per second and a check string that must equal
/// the Bumble side's (compare/bumble_bench.py), which measures the same way.
@main
struct BluejayCompare {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            switch arguments.first {
            case "pipeline", "pipeline-async":
                // H4 bytes injected into our central's transport, through to Bluejay's listen
                // callback (pipeline) or its async listen's stream (pipeline-async).
                let count = Int(arguments.dropFirst().first ?? "") ?? 200_000
                let size = Int(arguments.dropFirst(2).first ?? "") ?? 20
                let perRead = Int(arguments.dropFirst(3).first ?? "") ?? 32
                let bench = try await PipelineBench.make(asyncListen: arguments.first == "pipeline-async")
                let chunks = bench.notificationChunks(count: count, size: size, perRead: perRead)
                _ = await bench.deliver(bench.notificationChunks(count: 10_000, size: size, perRead: perRead), count: 10_000)
                let cpuStart = ProcessCPU.now()
                let start = ContinuousClock.now
                _ = await bench.deliver(chunks, count: count)
                let elapsed = start.duration(to: .now)
                let cpu = ProcessCPU.now() - cpuStart
                let seconds = elapsed / .seconds(1)
                print("\(arguments[0]): \(count) notifications of \(size) B, \(perRead) per read: \(Int(Double(count) / seconds)) /s wall, "
                      + "\(String(format: "%.3f", cpu * 1e6 / Double(count))) µs CPU each")
                await bench.shutdown()
            case "scan":
                // LE Advertising Report events injected into our central's transport, through to a
                // Bluejay async scan with duplicates, from ADVERTISERS addresses in turn (50, or
                // that many random ones: 10,000 keeps the scan's tables at 10,000 peripherals).
                let count = Int(arguments.dropFirst().first ?? "") ?? 100_000
                let perRead = Int(arguments.dropFirst(2).first ?? "") ?? 8
                let advertisers = Int(arguments.dropFirst(3).first ?? "") ?? 50
                let bench = try await PipelineBench.make()
                try await bench.scan(try PipelineBench.advertisingReportChunks(count: 5_000, perRead: perRead), count: 5_000)
                let chunks = try PipelineBench.advertisingReportChunks(count: count, perRead: perRead, advertisers: advertisers)
                let before = ProcessCPU.usage()
                let start = ContinuousClock.now
                try await bench.scan(chunks, count: count)
                let elapsed = start.duration(to: .now)
                let after = ProcessCPU.usage()
                let seconds = elapsed / .seconds(1)
                print("scan: \(count) advertising reports from \(advertisers) advertisers, \(perRead) per read: \(Int(Double(count) / seconds)) /s wall, "
                      + "\(String(format: "%.2f", (after.cpu - before.cpu) * 1e6 / Double(count))) µs CPU each, "
                      + "\(String(format: "%.2f", Double(after.contextSwitches - before.contextSwitches) / Double(count))) context switches each")
                await bench.shutdown()
            case "reads", "host-reads":
                // Sequential reads through Bluejay's async API (or the host's GATTClient, for
                // host-reads), a responder in the controller's place.
                let count = Int(arguments.dropFirst().first ?? "") ?? 20_000
                let throughHost = arguments.first == "host-reads"
                let bench = try await PipelineBench.make()
                try await bench.sequentialReads(1_000, throughHost: throughHost)
                let before = ProcessCPU.usage()
                let start = ContinuousClock.now
                try await bench.sequentialReads(count, throughHost: throughHost)
                let elapsed = start.duration(to: .now)
                let after = ProcessCPU.usage()
                let seconds = elapsed / .seconds(1)
                print("\(arguments[0]): \(count) sequential reads of 20 B: \(String(format: "%.1f", seconds * 1e6 / Double(count))) µs each (wall), "
                      + "\(String(format: "%.1f", (after.cpu - before.cpu) * 1e6 / Double(count))) µs CPU, "
                      + "\(String(format: "%.2f", Double(after.contextSwitches - before.contextSwitches) / Double(count))) context switches each")
                await bench.shutdown()
            case "memory":
                // Our central's memory per connection; the peripherals run in a child process.
                let count = Int(arguments.dropFirst().first ?? "") ?? 20
                let result = try await MemoryBench.measure(count: count, executable: CommandLine.arguments[0])
                func kib(_ bytes: Double) -> String { String(format: "%.1f KiB", bytes / 1024) }
                print("memory: \(result.connections) connections, before discovery: heap \(kib(result.heapPerConnectionConnected)) per connection")
                print("memory: \(result.connections) connections, database discovered: heap \(kib(result.heapPerConnection)), "
                      + "resident \(kib(result.residentPerConnection)) per connection")
                print("memory: with \(result.subscriptionsPerConnection) subscriptions each: heap \(kib(result.heapPerConnectionSubscribed)), "
                      + "resident \(kib(result.residentPerConnectionSubscribed)) per connection")
            case "memory-serve":
                try await MemoryBench.serve(count: Int(arguments.dropFirst().first ?? "") ?? 20)
            case "generate" where arguments.count == 2:
                try Corpus().write(to: URL(fileURLWithPath: arguments[1]))
            case "run" where arguments.count >= 2:
                var seconds = 0.3
                var only: Set<String>?
                var rest = arguments.dropFirst(2).makeIterator()
                while let option = rest.next() {
                    switch option {
                    case "--seconds": seconds = Double(rest.next() ?? "") ?? seconds
                    case "--only": only = Set((rest.next() ?? "").split(separator: ",").map(String.init))
                    default: throw UsageError()
                    }
                }
                let corpus = try Corpus(reading: URL(fileURLWithPath: arguments[1]))
                try await run(corpus: corpus, seconds: seconds, only: only)
            default:
                throw UsageError()
            }
        } catch is UsageError {
            FileHandle.standardError.write(Data("usage: bluejay-compare generate DIR | run DIR [--seconds S] [--only op,op]\n".utf8))
            exit(64)
        } catch {
            FileHandle.standardError.write(Data("bluejay-compare: \(error)\n".utf8))
            exit(1)
        }
    }

    struct UsageError: Error {}

    struct Result {
        var name: String
        var opsPerSecond: Double
        var ops: Int
        var seconds: Double
        var check: String
    }

    /// Runs `batch` (which processes `items` items) for at least `seconds`, after one warm-up.
    static func measure(_ name: String, items: Int, seconds: Double, check: String,
                        _ batch: () async throws -> Int) async rethrows -> Result {
        var sink = try await batch()
        let clock = ContinuousClock()
        let start = clock.now
        var batches = 0
        var elapsed = 0.0
        repeat {
            sink &+= try await batch()
            batches += 1
            let duration = clock.now - start
            elapsed = duration / .seconds(1)
        } while elapsed < seconds
        if sink == Int.min { print("") }  // keeps the work observable
        return Result(name: name, opsPerSecond: Double(batches * items) / elapsed, ops: batches * items, seconds: elapsed, check: check)
    }

    static func run(corpus: Corpus, seconds: Double, only: Set<String>?) async throws {
        let work = Workloads(corpus: corpus)
        var results: [Result] = []
        func wanted(_ name: String) -> Bool { only?.contains(name) ?? true }

        if wanted("hci_adv_report_decode") {
            results.append(await measure("hci_adv_report_decode", items: corpus.advertisingReportEvents.count, seconds: seconds,
                                         check: work.advertisingReportCheck()) { work.advertisingReportBatch() })
        }
        if wanted("h4_deframe") {
            results.append(await measure("h4_deframe", items: corpus.h4PacketCount, seconds: seconds, check: work.h4Check()) { work.h4Batch() })
        }
        if wanted("att_notification_decode") {
            results.append(await measure("att_notification_decode", items: corpus.attNotifications.count, seconds: seconds,
                                         check: work.notificationCheck()) { work.notificationBatch() })
        }
        if wanted("att_read_by_type_rsp_decode") {
            results.append(await measure("att_read_by_type_rsp_decode", items: corpus.attReadByTypeResponses.count, seconds: seconds,
                                         check: work.readByTypeCheck()) { work.readByTypeBatch() })
        }
        if wanted("adv_data_decode") {
            results.append(await measure("adv_data_decode", items: corpus.advertisingData.count, seconds: seconds,
                                         check: work.advertisingDataCheck()) { work.advertisingDataBatch() })
        }
        if wanted("adv_data_decode_typed") {
            results.append(await measure("adv_data_decode_typed", items: corpus.advertisingData.count, seconds: seconds,
                                         check: work.advertisingDataTypedCheck()) { work.advertisingDataTypedBatch() })
        }
        if wanted("hci_le_create_connection_encode") {
            results.append(await measure("hci_le_create_connection_encode", items: corpus.createConnections.count, seconds: seconds,
                                         check: work.createConnectionCheck()) { work.createConnectionBatch() })
        }
        for size in [27, 251] where wanted("acl_fragment_512_to_\(size)") {
            results.append(await measure("acl_fragment_512_to_\(size)", items: corpus.l2capPDUs.count, seconds: seconds,
                                         check: work.fragmentCheck(size: size)) { work.fragmentBatch(size: size) })
        }
        if wanted("acl_reassemble_27") {
            results.append(await measure("acl_reassemble_27", items: corpus.l2capPDUs.count, seconds: seconds,
                                         check: work.reassemblyCheck()) { work.reassemblyBatch() })
        }
        for size in [27, 512] where wanted("acl_send_path_\(size)") {
            let bench = ACLPathBench(bufferSize: 27, bufferCount: 8)
            let pdus = ACLPathBench.pdus(size: size, count: 200)
            let fragmentsPerPDU = (size + 26) / 27
            results.append(await measure("acl_send_path_\(size)", items: pdus.count, seconds: seconds,
                                         check: "pdus=\(pdus.count) fragments=\(pdus.count * fragmentsPerPDU)") { await bench.send(pdus) })
        }
        if wanted("gatt_read") || wanted("gatt_notify") || wanted("gatt_long_write_512") {
            let pair = try await GATTPair.make()
            if wanted("gatt_read") {
                let value = try await pair.client.readValue(handle: pair.readHandle)
                var crc = CRC32()
                crc.update(value)
                results.append(try await measure("gatt_read", items: 200, seconds: seconds,
                                                 check: "value=\(value.count) crc=\(crc.hex)") { try await pair.reads(200) })
            }
            if wanted("gatt_notify") {
                results.append(try await measure("gatt_notify", items: 500, seconds: seconds,
                                                 check: "value=\(GATTPair.notifyValue.count)") { try await pair.notify(500) })
            }
            if wanted("gatt_long_write_512") {
                var result = try await measure("gatt_long_write_512", items: 20, seconds: seconds, check: "") { try await pair.longWrites(20) }
                let written = await pair.writtenValue()
                var crc = CRC32()
                crc.update(written)
                result.check = "value=\(written.count) crc=\(crc.hex)"
                results.append(result)
            }
        }

        var lines: [String] = []
        for result in results {
            lines.append("    \"\(result.name)\": {\"ops_per_sec\": \(result.opsPerSecond), \"ops\": \(result.ops), "
                + "\"seconds\": \(result.seconds), \"check\": \"\(result.check)\"}")
        }
        print("{\n  \"implementation\": \"bluejay\",\n  \"results\": {\n" + lines.joined(separator: ",\n") + "\n  }\n}")
    }
}
