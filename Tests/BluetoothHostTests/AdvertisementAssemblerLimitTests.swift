import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

/// Reproducible random numbers (SplitMix64).
private struct SeededRandom: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The assembler's state stays bounded and each report costs O(1), amortized, whatever
/// addresses the reports carry. Time is simulated: explicit instants after a fixed start.
@Suite(.timeLimit(.minutes(2))) struct AdvertisementAssemblerLimitTests {
    static let start = ContinuousClock.now
    static let peers: [DeviceAddress] = {
        var random = SeededRandom(state: 7)
        var seen: Set<DeviceAddress> = []
        var peers: [DeviceAddress] = []
        while peers.count < 10_000 {
            let bits = random.next()
            var bytes = (0..<6).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
            bytes[0] |= 0xC0
            let peer = DeviceAddress(BluetoothAddress(bytes: bytes) ?? .zero, type: .random)
            if seen.insert(peer).inserted { peers.append(peer) }
        }
        return peers
    }()

    static let data: [UInt8] = (try? AdvertisingData([.completeLocalName("P")]).encoded()) ?? []

    func report(_ peer: DeviceAddress, _ type: AdvertisingReportEventType = .advInd) -> LEAdvertisingReportEvent.Report {
        LEAdvertisingReportEvent.Report(eventType: type, addressType: peer.type, address: peer.address, data: Self.data, rssi: -60)
    }

    func chain(_ peer: DeviceAddress, _ status: AdvertisingDataStatus, _ data: [UInt8]) -> LEExtendedAdvertisingReportEvent.Report {
        LEExtendedAdvertisingReportEvent.Report(eventType: [.connectable], dataStatus: status, addressType: ExtendedReportAddressType(peer.type),
                                                address: peer.address, advertisingSID: 1, txPower: nil, rssi: -50, data: data)
    }

    func at(_ milliseconds: Int) -> ContinuousClock.Instant { Self.start + .milliseconds(milliseconds) }

    @Test func tenThousandRandomAddressesAreTrackedAndForgottenWhenSilent() async {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        var reported = 0
        for round in 0..<2 {
            for (index, peer) in Self.peers.enumerated() {
                if assembler.receive(report(peer), at: at(round * 1_000 + index / 10)) != nil { reported += 1 }
                if index % 256 == 0 { await Task.yield() }
            }
        }
        #expect(reported == 10_000, "each peer once: the others are duplicates")
        #expect(assembler.peerCount == 10_000)
        #expect(assembler.evictedPeers == 0)
        // Half go silent; the other half are heard up to 59 s later.
        for (index, peer) in Self.peers.suffix(5_000).enumerated() {
            _ = assembler.receive(report(peer), at: at(59_000 + index / 10))
        }
        #expect(assembler.peerCount == 10_000, "not yet 60 s")
        _ = assembler.receive(report(Self.peers[9_999]), at: at(63_000))
        #expect(assembler.peerCount == 5_000, "the silent half is forgotten 60 s after it was last heard")
        #expect(assembler.expiredPeers == 5_000)
        // A forgotten peer is reported again; a remembered one is still a duplicate.
        #expect(assembler.receive(report(Self.peers[0]), at: at(63_001)) != nil)
        #expect(assembler.receive(report(Self.peers[9_000]), at: at(63_001)) == nil)
        _ = assembler.receive(report(Self.peers[0]), at: at(200_000))
        #expect(assembler.peerCount == 1, "everyone else silent for over 60 s")
    }

    @Test func pastThePeerLimitTheLeastRecentlyHeardIsForgotten() async {
        var options = ScanOptions()
        options.peerLimit = 1_000
        var assembler = AdvertisementAssembler(options: options)
        // A scan response waiting to be merged is part of the state kept per peer.
        for (index, peer) in Self.peers.enumerated() {
            _ = assembler.receive(report(peer, .advScanInd), at: at(index / 100))
            #expect(assembler.peerCount <= 1_000)
            if index % 256 == 0 { await Task.yield() }
        }
        #expect(assembler.peerCount == 1_000)
        #expect(assembler.evictedPeers == 9_000)
        #expect(assembler.receive(report(Self.peers[9_500]), at: at(200)) == nil, "recently heard: still a duplicate")
        #expect(assembler.receive(report(Self.peers[0]), at: at(200)) != nil, "forgotten: reported again")
    }

    @Test func defaultLimitBoundsAFlood() async {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        #expect(assembler.options.peerLimit == 16_384)
        var random = SeededRandom(state: 99)
        for index in 0..<17_000 {
            let bits = random.next()
            var bytes = (0..<6).map { UInt8(truncatingIfNeeded: bits >> (8 * $0)) }
            bytes[0] |= 0xC0
            _ = assembler.receive(report(DeviceAddress(BluetoothAddress(bytes: bytes) ?? .zero, type: .random)), at: at(index / 1_000))
            if index % 256 == 0 { await Task.yield() }
        }
        #expect(assembler.peerCount == 16_384)
        #expect(assembler.evictedPeers == 17_000 - 16_384)
    }

    @Test func unfinishedExtendedAdvertisementsAreBounded() async {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        for peer in Self.peers.prefix(1_000) {
            #expect(assembler.receive(chain(peer, .incompleteMoreToCome, [2, 0x09, 0x41]), at: at(0)) == nil)
        }
        #expect(assembler.pendingChainCount == AdvertisementAssembler.pendingChainLimit)
        #expect(assembler.droppedChains == 1_000 - AdvertisementAssembler.pendingChainLimit)
        // The rest of a chain long given up (or never finished) is not joined to it.
        _ = assembler.receive(chain(Self.peers[0], .incompleteMoreToCome, [2, 0x09, 0x42]), at: at(61_000))
        #expect(assembler.pendingChainCount == 1, "the others were silent for 60 s")
    }

    @Test func anEndlessChainIsCutAtTheLongestAdvertisingData() async throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        let piece = [UInt8](repeating: 0xFF, count: 250)
        var delivered: Advertisement?
        var pieces = 0
        while delivered == nil, pieces < 100 {
            delivered = assembler.receive(chain(Self.peers[0], .incompleteMoreToCome, piece), at: at(pieces))
            pieces += 1
        }
        #expect(pieces == 7, "1,650 bytes are reached with the 7th piece of 250")
        #expect(delivered != nil, "reported as truncated once past 1,650 bytes")
        #expect(assembler.pendingChainCount == 0)
        #expect(assembler.droppedChains == 1)
    }

    @Test func aReportCostsConstantWorkForTenThousandPeers() async {
        func workPerReport(peers: Int, reports: Int) async -> Double {
            var options = ScanOptions(filterDuplicates: false)
            options.peerLimit = peers / 2
            var assembler = AdvertisementAssembler(options: options)
            var random = SeededRandom(state: UInt64(peers))
            for index in 0..<reports {
                let peer = Self.peers[Int.random(in: 0..<peers, using: &random)]
                _ = assembler.receive(report(peer), at: at(index / 100))
                if index % 256 == 0 { await Task.yield() }
            }
            return Double(assembler.visits) / Double(reports)
        }
        let small = await workPerReport(peers: 1_000, reports: 20_000)
        let large = await workPerReport(peers: 10_000, reports: 20_000)
        #expect(small < 4, "work per report, 1,000 peers: \(small)")
        #expect(large < 4, "work per report, 10,000 peers: \(large)")
    }
}
