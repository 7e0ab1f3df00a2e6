import BenchmarkSupport
import Benchmark

/// Packet decoding. Each benchmark decodes 1,000 items per iteration (scaling factor kilo),
/// so "Throughput (# / s)" is items per second.
let work = Workloads(corpus: Corpus(h4Packets: 1000))

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    Benchmark("HCI LE Advertising Report event decode (events)") { benchmark in
        let events = work.corpus.advertisingReportEvents
        for index in benchmark.scaledIterations {
            blackHole(Workloads.decodeAdvertisingReport(events[index % events.count]))
        }
    }

    Benchmark("H4 deframe, mixed stream in 1-61 byte reads (packets)") { benchmark in
        // One pass over a 1,000-packet stream per iteration.
        blackHole(work.h4Batch())
    }

    Benchmark("ATT Handle Value Notification decode (PDUs)") { benchmark in
        let pdus = work.corpus.attNotifications
        for index in benchmark.scaledIterations {
            blackHole(Workloads.decodeATT(pdus[index % pdus.count]))
        }
    }

    Benchmark("ATT Read By Type Response decode (PDUs)") { benchmark in
        let pdus = work.corpus.attReadByTypeResponses
        for index in benchmark.scaledIterations {
            blackHole(Workloads.decodeATT(pdus[index % pdus.count]))
        }
    }

    Benchmark("Advertising data decode, 31 bytes (payloads)") { benchmark in
        let payloads = work.corpus.advertisingData
        for index in benchmark.scaledIterations {
            blackHole(Workloads.decodeAdvertisingData(payloads[index % payloads.count]))
        }
    }

    Benchmark("Advertising data decode + typed fields, 31 bytes (payloads)") { benchmark in
        let payloads = work.corpus.advertisingData
        for index in benchmark.scaledIterations {
            blackHole(Workloads.decodeAdvertisingDataTyped(payloads[index % payloads.count]))
        }
    }
}
