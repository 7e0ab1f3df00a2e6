import BluetoothCore
import BluetoothHCI

/// Turns advertising reports into ``Advertisement``s: merges scan responses into the
/// advertisement of the same peer, joins extended advertising data that arrives in several
/// reports, filters by service, and suppresses duplicates. A plain state machine: no I/O.
///
/// Its state is bounded whatever the peers send: at most ``ScanOptions/peerLimit`` peers (past
/// it the least recently heard is forgotten), none kept longer than ``ScanOptions/peerTimeout``
/// after it was last heard, at most ``pendingChainLimit`` extended advertisements still
/// arriving, each at most ``AdvertisingData/extendedMaximumLength`` bytes. Each report costs
/// O(1), amortized.
struct AdvertisementAssembler {
    let options: ScanOptions
    /// Per peer, least recently heard first: the latest advertisement and what was last
    /// reported (for duplicate filtering).
    private var peers = RecencyTable<DeviceAddress, Peer>()
    /// Extended advertising data still arriving, per peer and advertising set.
    private var partialData = RecencyTable<PartialKey, Partial>()
    /// Peers forgotten because the table was full.
    private(set) var evictedPeers = 0
    /// Peers forgotten because they were not heard within ``ScanOptions/peerTimeout``.
    private(set) var expiredPeers = 0
    /// When silent peers were last looked for: at most once a second, not at every report.
    private var nextForgetting: ContinuousClock.Instant?
    /// Extended advertisements given up while they were still arriving (too many at once,
    /// or their rest never came) or cut at ``AdvertisingData/extendedMaximumLength``.
    private(set) var droppedChains = 0

    /// How many extended advertisements may be arriving at once, in pieces. A controller
    /// reassembles a few chains at a time; past this the one least recently added to is
    /// given up (and counted), so that chains left unfinished cannot pile up.
    static let pendingChainLimit = 64

    private struct Peer {
        var latest: Advertisement
        var reported: (advertisingData: AdvertisingData, scanResponse: AdvertisingData?)?
        var dataCut: (truncated: Bool, partial: Bool) = (false, false)
        var scanResponseCut: (truncated: Bool, partial: Bool) = (false, false)
    }

    private struct PartialKey: Hashable {
        var peer: DeviceAddress
        var sid: UInt8?
        var isScanResponse: Bool
    }

    private struct Partial {
        var data: [UInt8]
        var lastHeard: ContinuousClock.Instant
    }

    init(options: ScanOptions) { self.options = options }

    /// How many peers the assembler keeps state for now.
    var peerCount: Int { peers.count }
    /// How many extended advertisements are still arriving.
    var pendingChainCount: Int { partialData.count }
    /// The work done beyond one step per report (stale entries skipped, compactions), for
    /// the test that each report costs O(1), amortized.
    var visits: Int { peers.visits + partialData.visits }

    /// A legacy advertising report; returns what to report, if anything.
    mutating func receive(_ report: LEAdvertisingReportEvent.Report, at time: ContinuousClock.Instant = .now) -> Advertisement? {
        forgetSilentPeers(at: time)
        let isScanResponse = report.eventType == .scanRsp
        return merge(
            peer: report.advertiser, data: report.data, isScanResponse: isScanResponse,
            isConnectable: report.eventType.isConnectable, isScannable: report.eventType == .advInd || report.eventType == .advScanInd,
            isDirected: report.eventType == .advDirectInd, rssi: report.rssi, txPower: nil, time: time
        )
    }

    /// An extended advertising report; returns what to report, if anything.
    mutating func receive(_ report: LEExtendedAdvertisingReportEvent.Report, at time: ContinuousClock.Instant = .now) -> Advertisement? {
        guard let peer = report.advertiser else { return nil }
        forgetSilentPeers(at: time)
        let isScanResponse = report.eventType.contains(.scanResponse)
        let key = PartialKey(peer: peer, sid: report.advertisingSID, isScanResponse: isScanResponse)
        var data = partialData.removeValue(forKey: key)?.data ?? []
        data += report.data
        var status = report.dataStatus
        var isPartial = false
        if data.count > AdvertisingData.extendedMaximumLength {
            // More than any controller assembles: a hostile one. Keep what fits, as partial.
            data.removeLast(data.count - AdvertisingData.extendedMaximumLength)
            droppedChains += 1
            if status == .incompleteMoreToCome { status = .incompleteTruncated }
            isPartial = true
        }
        switch status {
        case .incompleteMoreToCome:
            if partialData.count >= Self.pendingChainLimit, partialData.removeLeastRecent() != nil { droppedChains += 1 }
            partialData.touch(key, value: Partial(data: data, lastHeard: time))
            return nil
        case .complete, .incompleteTruncated:
            break
        }
        let isExtended = !report.eventType.contains(.legacy)
        let origin = Origin(isTruncated: report.dataStatus == .incompleteTruncated, isPartial: isPartial, primaryPHY: report.primaryPHY,
                            secondaryPHY: isExtended ? report.secondaryPHY : nil, sid: report.advertisingSID, isExtended: isExtended)
        return merge(
            peer: peer, data: data, isScanResponse: isScanResponse,
            isConnectable: report.eventType.contains(.connectable), isScannable: report.eventType.contains(.scannable),
            isDirected: report.eventType.contains(.directed), rssi: report.rssi, txPower: report.txPower, time: time, origin: origin
        )
    }

    /// Where an extended report's data came from, and whether all of it did.
    private struct Origin {
        var isTruncated = false
        var isPartial = false
        var primaryPHY: LEPhy?
        var secondaryPHY: LEPhy?
        var sid: UInt8?
        var isExtended = false
    }

    private mutating func merge(peer: DeviceAddress, data bytes: [UInt8], isScanResponse: Bool, isConnectable: Bool,
                                isScannable: Bool, isDirected: Bool, rssi: Int8?, txPower: Int8?,
                                time: ContinuousClock.Instant, origin: Origin = Origin()) -> Advertisement? {
        // Real devices send malformed data: keep the well-formed structures.
        let data = AdvertisingData.decodeLeniently(bytes)
        let report = Report(data: data, isScanResponse: isScanResponse, isConnectable: isConnectable, isScannable: isScannable,
                            isDirected: isDirected, rssi: rssi, txPower: txPower, time: time, origin: origin)
        let options = options
        // In place: the peer's state is neither copied out nor written back.
        if let result = peers.touch(peer, { state in Self.merge(report, into: &state, options: options) }) { return result }
        if peers.count >= max(1, options.peerLimit), peers.removeLeastRecent() != nil { evictedPeers += 1 }
        var state = Peer(latest: Advertisement(peer: peer, rssi: rssi, isConnectable: isConnectable,
                                               advertisingData: AdvertisingData(), timestamp: time))
        let result = Self.merge(report, into: &state, options: options)
        peers.touch(peer, value: state)
        return result
    }

    /// One assembled report, to merge into its peer's state.
    private struct Report {
        var data: AdvertisingData
        var isScanResponse: Bool
        var isConnectable: Bool
        var isScannable: Bool
        var isDirected: Bool
        var rssi: Int8?
        var txPower: Int8?
        var time: ContinuousClock.Instant
        var origin: Origin
    }

    /// Merges a report into the peer's latest advertisement; returns it unless the service
    /// filter or the duplicate filter holds it back.
    private static func merge(_ report: Report, into state: inout Peer, options: ScanOptions) -> Advertisement? {
        if report.isScanResponse {
            state.latest.scanResponse = report.data
        } else {
            state.latest.advertisingData = report.data
            state.latest.isConnectable = report.isConnectable
            state.latest.isScannable = report.isScannable
            state.latest.isDirected = report.isDirected
            state.latest.isExtended = report.origin.isExtended
            state.latest.primaryPHY = report.origin.primaryPHY
            state.latest.secondaryPHY = report.origin.secondaryPHY
            state.latest.advertisingSID = report.origin.sid
        }
        // Either part's data may have been cut: the advertisement says so until a later
        // report of that part arrives whole.
        if report.isScanResponse {
            state.scanResponseCut = (report.origin.isTruncated, report.origin.isPartial)
        } else {
            state.dataCut = (report.origin.isTruncated, report.origin.isPartial)
        }
        state.latest.isDataTruncated = state.dataCut.truncated || state.scanResponseCut.truncated
        state.latest.isDataPartial = state.dataCut.partial || state.scanResponseCut.partial
        state.latest.rssi = report.rssi ?? state.latest.rssi
        state.latest.txPower = report.txPower ?? state.latest.txPowerLevel ?? state.latest.txPower
        state.latest.timestamp = report.time

        if let minimum = options.minimumRSSI, let rssi = state.latest.rssi, rssi < minimum { return nil }
        if !options.serviceUUIDs.isEmpty {
            let advertised = Set(state.latest.serviceUUIDs)
            guard options.serviceUUIDs.contains(where: advertised.contains) else { return nil }
        }
        if options.filterDuplicates {
            if let previous = state.reported, previous.advertisingData == state.latest.advertisingData,
               previous.scanResponse == state.latest.scanResponse {
                return nil
            }
            state.reported = (state.latest.advertisingData, state.latest.scanResponse)
        }
        return state.latest
    }

    /// Forgets the peers, and the unfinished extended advertisements, not heard for
    /// ``ScanOptions/peerTimeout``: the least recently heard come first, so this stops at the
    /// first one heard since. Looks once a second at most (a peer is forgotten up to a second
    /// late).
    private mutating func forgetSilentPeers(at time: ContinuousClock.Instant) {
        if let next = nextForgetting, time < next { return }
        nextForgetting = time + .seconds(1)
        while let least = peers.leastRecent(), least.value.latest.timestamp.duration(to: time) >= options.peerTimeout {
            peers.removeLeastRecent()
            expiredPeers += 1
        }
        while let least = partialData.leastRecent(), least.value.lastHeard.duration(to: time) >= options.peerTimeout {
            partialData.removeLeastRecent()
            droppedChains += 1
        }
    }
}
