import BenchmarkSupport
import Benchmark
import BluetoothHCI

/// Encoding, ACL fragmentation and reassembly. 1,000 items per iteration (scaling factor
/// kilo), so "Throughput (# / s)" is items per second.
let work = Workloads(corpus: Corpus())

/// The 27-octet fragments of each 512-octet PDU, encoded, for reassembly.
let fragmentsByPDU: [[[UInt8]]] = work.corpus.l2capPDUs.map { Workloads.fragment($0, size: 27) }

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 100_000
    )

    Benchmark("HCI LE Create Connection encode (commands)") { benchmark in
        let inputs = work.createConnections
        for index in benchmark.scaledIterations {
            blackHole(Workloads.encodeCreateConnection(inputs[index % inputs.count]))
        }
    }

    for size in [27, 251] {
        Benchmark("ACL fragment + encode, 512-byte PDU into \(size)-byte fragments (PDUs)") { benchmark in
            let pdus = work.corpus.l2capPDUs
            for index in benchmark.scaledIterations {
                blackHole(Workloads.fragment(pdus[index % pdus.count], size: size))
            }
        }
    }

    Benchmark("ACL decode + reassemble, 512-byte PDU from 27-byte fragments (PDUs)") { benchmark in
        var reassembler = ACLReassembler()
        for index in benchmark.scaledIterations {
            for bytes in fragmentsByPDU[index % fragmentsByPDU.count] {
                if let packet = try? ACLDataPacket.decode(bytes) {
                    blackHole(try? reassembler.append(packet))
                }
            }
        }
    }
}
