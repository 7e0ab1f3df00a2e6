import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

@Suite(.timeLimit(.minutes(1))) struct AdvertisementAssemblerTests {
    static let peerA = DeviceAddress(BluetoothAddress("AA:BB:CC:DD:EE:01") ?? .zero, type: .random)
    static let peerB = DeviceAddress(BluetoothAddress("AA:BB:CC:DD:EE:02") ?? .zero, type: .public)
    static let heartRate = BluetoothUUID(UInt16(0x180D))
    static let battery = BluetoothUUID(UInt16(0x180F))
    static let custom: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"

    func bytes(_ fields: [ADField], maximumLength: Int = AdvertisingData.legacyMaximumLength) throws -> [UInt8] {
        try AdvertisingData(fields).encoded(maximumLength: maximumLength)
    }

    func legacy(_ type: AdvertisingReportEventType, _ peer: DeviceAddress, _ data: [UInt8], rssi: Int8 = -60) -> LEAdvertisingReportEvent.Report {
        LEAdvertisingReportEvent.Report(eventType: type, addressType: peer.type, address: peer.address, data: data, rssi: rssi)
    }

    func extended(_ type: ExtendedAdvertisingEventType, _ status: AdvertisingDataStatus = .complete, _ peer: DeviceAddress,
                  sid: UInt8? = 1, txPower: Int8? = nil, _ data: [UInt8]) -> LEExtendedAdvertisingReportEvent.Report {
        LEExtendedAdvertisingReportEvent.Report(eventType: type, dataStatus: status, addressType: ExtendedReportAddressType(peer.type),
                                                address: peer.address, advertisingSID: sid, txPower: txPower, rssi: -50, data: data)
    }

    @Test func aScanResponseIsMergedIntoTheSamePeersAdvertisement() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        let advertising = try bytes([.flags(.leGeneralDiscoverableMode), .serviceUUIDs16([0x180D], complete: true)])
        let firstReport = assembler.receive(legacy(.advInd, Self.peerA, advertising))
        let first = try #require(firstReport)
        #expect(first.scanResponse == nil)
        #expect(first.isConnectable)
        #expect(first.isScannable)
        #expect(first.localName == nil)

        let mergedReport = try assembler.receive(legacy(.scanRsp, Self.peerA, bytes([.completeLocalName("Sensor")]), rssi: -70))
        let merged = try #require(mergedReport)
        #expect(merged.peer == Self.peerA)
        #expect(merged.advertisingData == AdvertisingData.decodeLeniently(advertising))
        #expect(merged.localName == "Sensor")
        #expect(merged.serviceUUIDs == [Self.heartRate])
        #expect(merged.isConnectable, "a scan response does not change how the peer advertises")
        #expect(merged.rssi == -70)
    }

    @Test func aScanResponseIsNotMergedIntoAnotherPeer() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        _ = assembler.receive(legacy(.advInd, Self.peerA, try bytes([.completeLocalName("A")])))
        let otherReport = try assembler.receive(legacy(.scanRsp, Self.peerB, bytes([.completeLocalName("B")])))
        let other = try #require(otherReport)
        #expect(other.peer == Self.peerB)
        #expect(other.advertisingData == AdvertisingData())
        #expect(other.localName == "B")
        let againReport = try assembler.receive(legacy(.advInd, Self.peerA, bytes([.completeLocalName("A2")])))
        let again = try #require(againReport)
        #expect(again.scanResponse == nil)
        #expect(again.localName == "A2")
    }

    @Test func duplicatesAreFilteredButChangedDataIsReported() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: true))
        let one = try bytes([.completeLocalName("One")])
        #expect(assembler.receive(legacy(.advInd, Self.peerA, one)) != nil)
        #expect(assembler.receive(legacy(.advInd, Self.peerA, one, rssi: -40)) == nil)
        // Another peer with the same data is not a duplicate.
        #expect(assembler.receive(legacy(.advInd, Self.peerB, one)) != nil)
        let changedReport = try assembler.receive(legacy(.advInd, Self.peerA, bytes([.completeLocalName("Two")])))
        let changed = try #require(changedReport)
        #expect(changed.localName == "Two")
        #expect(assembler.receive(legacy(.advInd, Self.peerA, try bytes([.completeLocalName("Two")]))) == nil)
        // A scan response is new data too; repeating it is not.
        let response = try bytes([.manufacturerSpecificData(companyID: 0x004C, data: [1, 2])])
        #expect(assembler.receive(legacy(.scanRsp, Self.peerA, response)) != nil)
        #expect(assembler.receive(legacy(.scanRsp, Self.peerA, response)) == nil)
        #expect(assembler.receive(legacy(.advInd, Self.peerA, try bytes([.completeLocalName("Two")]))) == nil)
        #expect(assembler.receive(legacy(.advInd, Self.peerA, one)) != nil, "back to the first data is a change")
    }

    @Test func withoutDuplicateFilteringEveryReportIsReported() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: false))
        let data = try bytes([.completeLocalName("Same")])
        for rssi: Int8 in [-60, -61, -62] {
            let advertisementReport = assembler.receive(legacy(.advInd, Self.peerA, data, rssi: rssi))
            let advertisement = try #require(advertisementReport)
            #expect(advertisement.rssi == rssi)
        }
    }

    @Test func theServiceFilterLooksAtAdvertisingDataAndScanResponse() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(serviceUUIDs: [Self.battery, Self.custom]))
        // Peer A names its service only in the scan response.
        #expect(assembler.receive(legacy(.advInd, Self.peerA, try bytes([.completeLocalName("A")]))) == nil)
        let matchedReport = try assembler.receive(legacy(.scanRsp, Self.peerA, bytes(ADField.serviceUUIDs([Self.custom], complete: true))))
        let matched = try #require(matchedReport)
        #expect(matched.localName == "A")
        #expect(matched.serviceUUIDs == [Self.custom])
        // Peer B advertises another service only.
        #expect(assembler.receive(legacy(.advInd, Self.peerB, try bytes([.serviceUUIDs16([0x180D], complete: true)]))) == nil)
        #expect(assembler.receive(legacy(.scanRsp, Self.peerB, try bytes([.completeLocalName("B")]))) == nil)
        let batteryReport = try assembler.receive(legacy(.advInd, Self.peerB, bytes([.serviceUUIDs16([0x180D, 0x180F], complete: true)])))
        let battery = try #require(batteryReport)
        #expect(battery.localName == "B")
    }

    @Test func extendedDataSplitOverSeveralReportsIsJoined() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        let name = String(repeating: "N", count: 200)
        let full = try bytes([.flags(.leGeneralDiscoverableMode), .completeLocalName(name),
                              .manufacturerSpecificData(companyID: 0x0059, data: [UInt8](repeating: 0xAB, count: 150))],
                             maximumLength: 1650)
        let parts = [Array(full[0..<100]), Array(full[100..<250]), Array(full[250...])]
        let type: ExtendedAdvertisingEventType = [.connectable]
        #expect(assembler.receive(extended(type, .incompleteMoreToCome, Self.peerA, parts[0])) == nil)
        #expect(assembler.receive(extended(type, .incompleteMoreToCome, Self.peerA, parts[1])) == nil)
        let advertisementReport = assembler.receive(extended(type, .complete, Self.peerA, txPower: -4, parts[2]))
        let advertisement = try #require(advertisementReport)
        #expect(advertisement.advertisingData == AdvertisingData.decodeLeniently(full))
        #expect(advertisement.localName == name)
        #expect(advertisement.data.manufacturerData?.data.count == 150)
        #expect(advertisement.txPower == -4)
        #expect(advertisement.isConnectable)
        #expect(advertisement.isExtended)
        #expect(!advertisement.isDataTruncated && !advertisement.isDataPartial)
        // The next advertisement starts afresh.
        let nextReport = try assembler.receive(extended(type, .complete, Self.peerA, bytes([.completeLocalName("Short")])))
        let next = try #require(nextReport)
        #expect(next.localName == "Short")
    }

    @Test func extendedFragmentsOfDifferentSetsAndOfScanResponsesAreKeptApart() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: false))
        let first = try bytes([.completeLocalName("First set")])
        let second = try bytes([.completeLocalName("Second set")])
        let response = try bytes([.manufacturerSpecificData(companyID: 1, data: [9, 9, 9])])
        let scannable: ExtendedAdvertisingEventType = [.scannable]
        #expect(assembler.receive(extended(scannable, .incompleteMoreToCome, Self.peerA, sid: 1, Array(first.prefix(4)))) == nil)
        #expect(assembler.receive(extended(scannable, .incompleteMoreToCome, Self.peerA, sid: 2, Array(second.prefix(5)))) == nil)
        #expect(assembler.receive(extended([.scannable, .scanResponse], .incompleteMoreToCome, Self.peerA, sid: 1, Array(response.prefix(3)))) == nil)
        let oneReport = assembler.receive(extended(scannable, .complete, Self.peerA, sid: 1, Array(first.dropFirst(4))))
        let one = try #require(oneReport)
        #expect(one.localName == "First set")
        let twoReport = assembler.receive(extended(scannable, .complete, Self.peerA, sid: 2, Array(second.dropFirst(5))))
        let two = try #require(twoReport)
        #expect(two.localName == "Second set")
        let withResponseReport = assembler.receive(extended([.scannable, .scanResponse], .complete, Self.peerA, sid: 1,
                                                            Array(response.dropFirst(3))))
        let withResponse = try #require(withResponseReport)
        #expect(withResponse.scanResponse == AdvertisingData.decodeLeniently(response))
    }

    @Test func truncatedExtendedDataReportsWhatArrived() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        let data = try bytes([.completeLocalName("Kept"), .completeLocalName("Lost part")])
        #expect(assembler.receive(extended([], .incompleteMoreToCome, Self.peerA, Array(data.prefix(3)))) == nil)
        let advertisementReport = assembler.receive(extended([], .incompleteTruncated, Self.peerA, Array(data[3..<8])))
        let advertisement = try #require(advertisementReport)
        // The whole first structure survives; the cut one is dropped.
        #expect(advertisement.localName == "Kept")
        #expect(advertisement.isDataTruncated)
        #expect(!advertisement.isDataPartial)
        // A later advertisement that arrives whole is no longer marked.
        let wholeReport = assembler.receive(extended([], .complete, Self.peerA, try bytes([.completeLocalName("Whole")])))
        let whole = try #require(wholeReport)
        #expect(!whole.isDataTruncated)
    }

    @Test func truncatedScanResponseMarksTheAdvertisement() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: false))
        _ = assembler.receive(extended([.scannable], .complete, Self.peerA, try bytes([.completeLocalName("Set")])))
        let response = try bytes([.manufacturerSpecificData(companyID: 1, data: [1, 2, 3, 4])])
        let report = assembler.receive(extended([.scannable, .scanResponse], .incompleteTruncated, Self.peerA, Array(response.prefix(4))))
        let advertisement = try #require(report)
        #expect(advertisement.localName == "Set")
        #expect(advertisement.isDataTruncated)
    }

    @Test func thePHYsAndSIDOfTheReportAreKept() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: false))
        var report = extended([.connectable], .complete, Self.peerA, sid: 7, try bytes([.completeLocalName("Coded")]))
        report.primaryPHY = .leCoded
        report.secondaryPHY = .le2M
        let received = assembler.receive(report)
        let advertisement = try #require(received)
        #expect(advertisement.primaryPHY == .leCoded)
        #expect(advertisement.secondaryPHY == .le2M)
        #expect(advertisement.advertisingSID == 7)
        // A legacy PDU in an extended report: LE 1M, no secondary PHY.
        var legacyReport = extended([.legacy, .connectable, .scannable], .complete, Self.peerB, sid: nil, try bytes([.completeLocalName("Old")]))
        legacyReport.secondaryPHY = nil
        let legacyReceived = assembler.receive(legacyReport)
        let legacy = try #require(legacyReceived)
        #expect(!legacy.isExtended)
        #expect(legacy.primaryPHY == .le1M)
        #expect(legacy.secondaryPHY == nil)
        #expect(legacy.advertisingSID == nil)
    }

    /// Found by fuzzing (Fuzz/Sources/FuzzAdvertising): a peer that chains reports and never
    /// ends the chain made the assembler keep every byte, and then report an advertisement
    /// longer than any advertiser can send.
    @Test func chainedExtendedDataStopsAtTheLongestAnAdvertiserCanSend() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions())
        // Whole 229-byte AD structures, the most one report carries, up to 16 times over: the
        // chain is given up as truncated as soon as it passes what an advertiser can send.
        let part = [228, 0xFF] + [UInt8](repeating: 0x5A, count: 227)
        var reported: Advertisement?
        var parts = 0
        while reported == nil, parts < 16 {
            reported = assembler.receive(extended([], .incompleteMoreToCome, Self.peerA, part))
            parts += 1
        }
        let advertisement = try #require(reported)
        #expect(parts == AdvertisingData.extendedMaximumLength / part.count + 1)
        #expect(advertisement.advertisingData.encodedLength <= AdvertisingData.extendedMaximumLength)
        // What fits is kept: the first seven whole structures.
        #expect(advertisement.advertisingData.structures.count == AdvertisingData.extendedMaximumLength / part.count)
        // The host cut it: partial, not truncated by the controller.
        #expect(advertisement.isDataPartial)
        #expect(!advertisement.isDataTruncated)
        // The next chain starts afresh.
        let nextReport = try assembler.receive(extended([], .complete, Self.peerA, bytes([.completeLocalName("Next")])))
        #expect(try #require(nextReport).localName == "Next")
    }

    @Test func anonymousExtendedReportsAreIgnored() throws {
        var assembler = AdvertisementAssembler(options: ScanOptions(filterDuplicates: false))
        var report = extended([.connectable], .complete, Self.peerA, try bytes([.completeLocalName("Nobody")]))
        report.addressType = .anonymous
        #expect(assembler.receive(report) == nil)
        report.dataStatus = .incompleteMoreToCome
        #expect(assembler.receive(report) == nil)
    }
}
