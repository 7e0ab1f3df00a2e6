import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Virtual link: advertising and scanning", .timeLimit(.minutes(1)))
struct ScanningTests {
    static let advertisingData: [UInt8] = [0x02, 0x01, 0x06, 0x05, 0x09, 0x56, 0x49, 0x52, 0x54] // flags, "VIRT"
    static let scanResponse: [UInt8] = [0x03, 0x19, 0x40, 0x02] // appearance

    func legacyReport(_ host: HCITestHost, scanResponse: Bool = false, timeout: Duration = .seconds(3)) async throws -> (LEAdvertisingReportEvent.Report, Duration) {
        let (event, time) = try await host.leEvent(scanResponse ? "SCAN_RSP report" : "advertising report", timeout: timeout) { event in
            guard case let .advertisingReport(report) = event else { return false }
            return report.reports.contains { ($0.eventType == .scanRsp) == scanResponse }
        }
        guard case let .advertisingReport(report) = event, let first = report.reports.first else { throw TestTimeout(description: "unreachable") }
        return (first, time)
    }

    @Test func passiveScannerSeesAdvertiserWithDataAndRSSI() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 10, y: 0)))
        try await advertiser.initialize()
        try await advertiser.advertise(data: Self.advertisingData, scanResponse: Self.scanResponse)
        try await scanner.initialize()
        #expect(try await scanner.complete(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x20, scanWindow: 0x20)).status == .success)
        #expect(try await scanner.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .success)
        let (report, _) = try await legacyReport(scanner)
        #expect(report.eventType == .advInd)
        #expect(report.address == TestAddresses.peripheral)
        #expect(report.addressType == .public)
        #expect(report.data == Self.advertisingData)
        // 0 dBm − (40 + 20·log10(10 m)) = −60 dBm.
        #expect(report.rssi == -60)
        #expect(try await scanner.expectNothing("scan response", for: .milliseconds(200)) { item in
            if case let .advertisingReport(report)? = item.le { return report.reports.contains { $0.eventType == .scanRsp } }
            return false
        })
    }

    @Test func activeScannerGetsTheScanResponse() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        try await advertiser.initialize()
        try await advertiser.advertise(data: Self.advertisingData, scanResponse: Self.scanResponse)
        try await scanner.initialize()
        #expect(try await scanner.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x20, scanWindow: 0x20)).status == .success)
        #expect(try await scanner.complete(LESetScanEnableCommand(enable: true, filterDuplicates: true)).status == .success)
        let (advertising, advertisingTime) = try await legacyReport(scanner)
        let (response, responseTime) = try await legacyReport(scanner, scanResponse: true)
        #expect(advertising.data == Self.advertisingData)
        #expect(response.data == Self.scanResponse)
        #expect(response.address == TestAddresses.peripheral)
        #expect(response.rssi == -40)
        #expect(responseTime >= advertisingTime)
        // Filter_Duplicates: each once, although the advertiser goes on every 20 ms.
        #expect(try await scanner.expectNothing("duplicate report", for: .milliseconds(250)) { $0.le != nil })
    }

    @Test func withoutDuplicateFilteringReportsRepeatAtTheAdvertisingInterval() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        try await advertiser.initialize()
        // 50 ms: 80 × 0.625 ms.
        try await advertiser.advertise(interval: 80, type: .advNonconnInd, data: Self.advertisingData)
        try await scanner.initialize()
        #expect(try await scanner.complete(LESetScanParametersCommand(scanType: .active, scanInterval: 0x20, scanWindow: 0x20)).status == .success)
        #expect(try await scanner.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .success)
        var times: [Duration] = []
        for _ in 0..<8 {
            let (report, time) = try await legacyReport(scanner)
            #expect(report.eventType == .advNonconnInd)
            times.append(time)
        }
        let gaps = zip(times.dropFirst(), times).map { ($0 - $1).milliseconds }
        // advInterval + advDelay: 50 to 60 ms (Core 6.0, Vol 6, Part B, 4.4.2.2.1).
        #expect(gaps.allSatisfy { $0 >= 50 && $0 <= 60 }, "gaps \(gaps)")
        #expect(Set(gaps).count > 1, "advDelay is random: \(gaps)")
        #expect(!scanner.inbox.all.contains { item in
            if case let .advertisingReport(report)? = item.item.le { return report.reports.contains { $0.eventType == .scanRsp } }
            return false
        }, "ADV_NONCONN_IND is not scannable")
    }

    @Test func extendedScanningReportsLegacyPDUsAsExtendedReports() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        try await advertiser.initialize()
        try await advertiser.complete(LESetRandomAddressCommand(address: TestAddresses.third))
        #expect(try await advertiser.complete(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20, ownAddressType: .random)).status == .success)
        try await advertiser.complete(LESetAdvertisingDataCommand(data: Self.advertisingData))
        try await advertiser.complete(LESetScanResponseDataCommand(data: Self.scanResponse))
        try await advertiser.complete(LESetAdvertisingEnableCommand(enable: true))
        try await scanner.initialize()
        #expect(try await scanner.complete(LESetExtendedScanParametersCommand(le1M: .init(scanType: .active, scanInterval: 0x20, scanWindow: 0x20))).status == .success)
        #expect(try await scanner.complete(LESetExtendedScanEnableCommand(enable: true, filterDuplicates: .enabled)).status == .success)
        var reports: [LEExtendedAdvertisingReportEvent.Report] = []
        for _ in 0..<2 {
            let (event, _) = try await scanner.leEvent("extended report") { if case .extendedAdvertisingReport = $0 { return true }; return false }
            if case let .extendedAdvertisingReport(report) = event { reports += report.reports }
        }
        #expect(reports.count == 2)
        let advertising = try #require(reports.first)
        let response = try #require(reports.last)
        // ADV_IND: legacy, scannable, connectable (Core 6.0, Vol 4, Part E, 7.7.65.13).
        #expect(advertising.eventType == [.legacy, .connectable, .scannable])
        #expect(response.eventType == [.legacy, .connectable, .scannable, .scanResponse])
        #expect(advertising.address == TestAddresses.third)
        #expect(advertising.addressType == .random)
        #expect(advertising.primaryPHY == .le1M)
        #expect(advertising.secondaryPHY == nil)
        #expect(advertising.advertisingSID == nil)
        #expect(advertising.data == Self.advertisingData)
        #expect(response.data == Self.scanResponse)
        #expect(!scanner.inbox.all.contains { item in
            if case .advertisingReport? = item.item.le { return true }
            return false
        }, "no legacy reports once the host used the extended commands")
    }

    @Test func extendedScanDurationEndsWithScanTimeout() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(address: TestAddresses.central))
        try await scanner.initialize()
        let start = scanner.now
        #expect(try await scanner.complete(LESetExtendedScanEnableCommand(enable: true, duration: 15)).status == .success)
        let (_, time) = try await scanner.leEvent("LE Scan Timeout") { $0 == .scanTimeout }
        #expect(time - start == .milliseconds(150))
        #expect(!scanner.controller.isScanning)
    }

    @Test func rssiFollowsDistanceAndRangeEnds() async throws {
        let link = VirtualLink.manual()
        let scanner = HCITestHost(link.addController(name: "scanner", address: TestAddresses.central))
        let advertiserController = link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0))
        let advertiser = HCITestHost(advertiserController)
        try await advertiser.initialize()
        try await advertiser.advertise(type: .advNonconnInd, data: Self.advertisingData)
        try await scanner.initialize()
        #expect(try await scanner.complete(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x20, scanWindow: 0x20)).status == .success)
        #expect(try await scanner.complete(LESetScanEnableCommand(enable: true, filterDuplicates: false)).status == .success)
        #expect(try await legacyReport(scanner).0.rssi == -40)

        advertiserController.move(to: .init(x: 0, y: 100))
        try await scanner.flushReports()
        #expect(try await legacyReport(scanner).0.rssi == -80)
        #expect(link.rssi(from: advertiserController, at: scanner.controller) == -80)

        // 1 km: 100 dB of path loss, beyond the 90 dB link budget.
        advertiserController.move(to: .init(x: 1000, y: 0))
        try await scanner.flushReports()
        #expect(!link.inRange(advertiserController, scanner.controller))
        #expect(try await scanner.expectNothing("report from out of range", for: .milliseconds(300)) { $0.le != nil })

        // An explicit path loss overrides the distance.
        link.setPathLoss(between: advertiserController, and: scanner.controller, to: 55)
        #expect(try await legacyReport(scanner).0.rssi == -55)
    }

    @Test func directedAdvertisingReachesOnlyItsTarget() async throws {
        let link = VirtualLink.manual()
        let target = HCITestHost(link.addController(name: "target", address: TestAddresses.central))
        let bystander = HCITestHost(link.addController(name: "bystander", address: TestAddresses.third))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        for host in [target, bystander, advertiser] { try await host.initialize() }
        #expect(try await advertiser.complete(LESetAdvertisingParametersCommand(
            intervalMin: 0x20, intervalMax: 0x20, advertisingType: .advDirectIndLow, peerAddressType: .public, peerAddress: TestAddresses.central)).status == .success)
        try await advertiser.complete(LESetAdvertisingEnableCommand(enable: true))
        for host in [target, bystander] {
            try await host.complete(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x20, scanWindow: 0x20))
            try await host.complete(LESetScanEnableCommand(enable: true, filterDuplicates: true))
        }
        let (report, _) = try await legacyReport(target)
        #expect(report.eventType == .advDirectInd)
        #expect(try await bystander.expectNothing("directed report", for: .milliseconds(200)) { $0.le != nil })
    }

    /// High duty cycle directed advertising sends its first PDU at once (its timer is due at the
    /// link's present when the enable is taken): the target hears it in the step that enabled
    /// it, with no advance of the manual clock. A wake-up armed for a time the clock already
    /// reads used to wait for the next advance, which a test need not make.
    @Test func aTimerDueAtTheLinksPresentFiresWithoutAnAdvance() async throws {
        let link = VirtualLink.manual()
        let target = HCITestHost(link.addController(name: "target", address: TestAddresses.central))
        let advertiser = HCITestHost(link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 1, y: 0)))
        for host in [target, advertiser] { try await host.initialize() }
        try await target.complete(LESetScanParametersCommand(scanType: .passive, scanInterval: 0x20, scanWindow: 0x20))
        try await target.complete(LESetScanEnableCommand(enable: true, filterDuplicates: true))
        #expect(try await advertiser.complete(LESetAdvertisingParametersCommand(
            intervalMin: 0, intervalMax: 0, advertisingType: .advDirectIndHigh, peerAddressType: .public, peerAddress: TestAddresses.central)).status == .success)
        let before = link.now
        try advertiser.sendRaw(LESetAdvertisingEnableCommand(enable: true).encode())
        link.waitUntilDelivered()
        #expect(link.now == before, "the clock did not move")
        #expect(target.inbox.contains { item in
            if case let .advertisingReport(report)? = item.le { return report.reports.contains { $0.eventType == .advDirectInd } }
            return false
        })
    }

    @Test func highDutyCycleDirectedAdvertisingTimesOut() async throws {
        let link = VirtualLink.manual()
        let advertiser = HCITestHost(link.addController(address: TestAddresses.peripheral))
        try await advertiser.initialize()
        #expect(try await advertiser.complete(LESetAdvertisingParametersCommand(
            intervalMin: 0, intervalMax: 0, advertisingType: .advDirectIndHigh, peerAddressType: .public, peerAddress: TestAddresses.central)).status == .success)
        try await advertiser.complete(LESetAdvertisingEnableCommand(enable: true))
        let (complete, _) = try await advertiser.connectionComplete()
        #expect(complete.status == .advertisingTimeout)
        #expect(complete.role == .peripheral)
        #expect(!advertiser.controller.isAdvertising)
    }
}

extension HCITestHost {
    /// Drops every report made before now. A command's answer comes after everything the
    /// controller sent before it, so once it is in, the reports still in flight are too.
    func flushReports() async throws {
        _ = try await complete(ReadBDADDRCommand())
        inbox.discard()
    }
}
