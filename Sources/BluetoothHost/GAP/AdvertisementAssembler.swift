import BluetoothCore
import BluetoothHCI

/// Turns advertising reports into ``Advertisement``s: merges scan responses into the
/// advertisement of the same peer, joins extended advertising data that arrives in several
/// reports, filters by service, and suppresses duplicates. A plain state machine: no I/O.
struct AdvertisementAssembler {
    /// The most advertising data one advertising set can carry, 1,650 octets (Core 6.0, Vol 4,
    /// Part E, 7.8.54 and 7.8.57). Data chained over reports stops there: a peer that never
    /// ends its chain costs at most this much per advertising set, and what is reported is no
    /// longer than a real advertiser can send (the rest of the chain is dropped, as a
    /// controller drops data it reports "incomplete, truncated").
    static let maximumDataLength = 1650

    let options: ScanOptions
    private var latest: [DeviceAddress: Advertisement] = [:]
    /// What was last reported per peer, for duplicate filtering.
    private var reported: [DeviceAddress: (AdvertisingData, AdvertisingData?)] = [:]
    /// Extended advertising data still arriving, per peer and advertising set.
    private var partialData: [PartialKey: [UInt8]] = [:]

    private struct PartialKey: Hashable {
        var peer: DeviceAddress
        var sid: UInt8?
        var isScanResponse: Bool
    }

    init(options: ScanOptions) { self.options = options }

    /// A legacy advertising report; returns what to report, if anything.
    mutating func receive(_ report: LEAdvertisingReportEvent.Report, at time: ContinuousClock.Instant = .now) -> Advertisement? {
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
        let isScanResponse = report.eventType.contains(.scanResponse)
        let key = PartialKey(peer: peer, sid: report.advertisingSID, isScanResponse: isScanResponse)
        var data = partialData.removeValue(forKey: key) ?? []
        data += report.data.prefix(Self.maximumDataLength - data.count)
        switch report.dataStatus {
        case .incompleteMoreToCome:
            partialData[key] = data
            return nil
        case .complete, .incompleteTruncated:
            break
        }
        return merge(
            peer: peer, data: data, isScanResponse: isScanResponse,
            isConnectable: report.eventType.contains(.connectable), isScannable: report.eventType.contains(.scannable),
            isDirected: report.eventType.contains(.directed), rssi: report.rssi, txPower: report.txPower, time: time
        )
    }

    private mutating func merge(peer: DeviceAddress, data bytes: [UInt8], isScanResponse: Bool, isConnectable: Bool,
                                isScannable: Bool, isDirected: Bool, rssi: Int8?, txPower: Int8?,
                                time: ContinuousClock.Instant) -> Advertisement? {
        // Real devices send malformed data: keep the well-formed structures.
        let data = AdvertisingData.decodeLeniently(bytes)
        var advertisement = latest[peer] ?? Advertisement(peer: peer, rssi: rssi, isConnectable: isConnectable,
                                                          advertisingData: AdvertisingData(), timestamp: time)
        if isScanResponse {
            advertisement.scanResponse = data
        } else {
            advertisement.advertisingData = data
            advertisement.isConnectable = isConnectable
            advertisement.isScannable = isScannable
            advertisement.isDirected = isDirected
        }
        advertisement.rssi = rssi ?? advertisement.rssi
        advertisement.txPower = txPower ?? advertisement.txPowerLevel ?? advertisement.txPower
        advertisement.timestamp = time
        latest[peer] = advertisement

        if !options.serviceUUIDs.isEmpty {
            let advertised = Set(advertisement.serviceUUIDs)
            guard options.serviceUUIDs.contains(where: advertised.contains) else { return nil }
        }
        if options.filterDuplicates {
            if let previous = reported[peer], previous.0 == advertisement.advertisingData, previous.1 == advertisement.scanResponse {
                return nil
            }
            reported[peer] = (advertisement.advertisingData, advertisement.scanResponse)
        }
        return advertisement
    }
}
