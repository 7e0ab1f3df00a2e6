import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// Two of our hosts over the virtual link with extended advertising sets and extended
/// scanning (Core 6.0, Vol 4, Part E, 7.8.53-7.8.65).
@Suite("Extended advertising between two of our hosts", .timeLimit(.minutes(1)))
struct ExtendedAdvertisingTests {
    /// Advertising data of exactly `length` octets: flags, then manufacturer data structures
    /// (at most 254 octets of data each) filled with `fill`.
    static func data(length: Int, fill: UInt8) -> AdvertisingData {
        var data = AdvertisingData([.flags(.leGeneralDiscoverableMode)])
        var remaining = length - 3
        while remaining > 0 {
            var encoded = min(remaining, 256)
            // Leave no remainder too short for a structure of its own.
            if (1...2).contains(remaining - encoded) { encoded -= 3 }
            data.structures.append(AdvertisingStructure(type: .manufacturerSpecificData, data: [UInt8](repeating: fill, count: encoded - 2)))
            remaining -= encoded
        }
        return data
    }

    /// Our two hosts, the peripheral 3 m away.
    static func makePair(link: VirtualLink.Configuration = .init(),
                         peripheralConfiguration: VirtualController.Configuration = .init()) async throws -> TwoDevices {
        var options = TwoDevices.Options(link: link)
        options.peripheral.controller = peripheralConfiguration
        options.peripheral.position = .init(x: 3, y: 0)
        return try await TwoDevices(options)
    }

    /// The first advertisement of the peripheral that `accept` takes.
    static func discover(_ central: LEHost, _ options: ScanOptions = ScanOptions(),
                         where accept: @escaping @Sendable (Advertisement) -> Bool) async throws -> Advertisement {
        try await withTimeout("discovering the peripheral") {
            for try await advertisement in try await central.scan(options)
            where advertisement.peer.address == TestAddresses.peripheral && accept(advertisement) {
                return advertisement
            }
            throw TestTimeout(description: "scan ended")
        }
    }

    @Test func aTwoHundredOctetAdvertisementIsSeenWhole() async throws {
        let pair = try await Self.makePair()
        #expect(await pair.peripheral.supportsExtendedAdvertising)
        #expect(try await pair.peripheral.maximumAdvertisingDataLength() == 1650)
        let data = Self.data(length: 200, fill: 0xA5)
        var parameters = ExtendedAdvertisingParameters(secondaryPHY: .le2M)
        parameters.sid = 5
        let set = try await pair.peripheral.startAdvertisingSet(data, parameters: parameters)
        #expect(!set.isLegacyFallback)
        #expect(await pair.peripheral.activeAdvertisingSets == [set])

        let advertisement = try await Self.discover(pair.central) { $0.isExtended }
        #expect(advertisement.advertisingData == data)
        #expect(try advertisement.advertisingData.encoded(maximumLength: 1650).count == 200)
        #expect(!advertisement.isDataTruncated && !advertisement.isDataPartial)
        #expect(advertisement.primaryPHY == .le1M)
        #expect(advertisement.secondaryPHY == .le2M)
        #expect(advertisement.advertisingSID == 5)
        #expect(!advertisement.isConnectable)
        try await pair.peripheral.stopAdvertisingSet(set)
        #expect(await pair.peripheral.activeAdvertisingSets.isEmpty)
    }

    /// Past 229 octets the controller reports the data in several reports (incomplete, more
    /// to come) and the host joins them; past 251 the host hands the data over in fragments.
    @Test func dataLongerThanOneReportAndOneCommandIsJoined() async throws {
        let pair = try await Self.makePair()
        let data = Self.data(length: 600, fill: 0x11)
        _ = try await pair.peripheral.startAdvertisingSet(data)
        let advertisement = try await Self.discover(pair.central) { $0.isExtended }
        #expect(advertisement.advertisingData == data)
        #expect(!advertisement.isDataTruncated)
    }

    @Test func aScannableSetAnswersWithItsLongScanResponse() async throws {
        let pair = try await Self.makePair()
        let response = AdvertisingData([.completeLocalName(String(repeating: "R", count: 250)),
                                        .manufacturerSpecificData(companyID: 0xFFFF, data: [UInt8](repeating: 0x22, count: 240))])
        _ = try await pair.peripheral.startAdvertisingSet(AdvertisingData(), scanResponse: response,
                                                          parameters: ExtendedAdvertisingParameters(isScannable: true))
        let advertisement = try await Self.discover(pair.central) { $0.scanResponse != nil && $0.isExtended }
        #expect(advertisement.scanResponse == response)
        #expect(advertisement.isScannable)
        #expect(advertisement.localName == String(repeating: "R", count: 250))
    }

    @Test func severalSetsAdvertiseAtOnce() async throws {
        let pair = try await Self.makePair()
        let connectable = Self.data(length: 120, fill: 1)
        let broadcast = Self.data(length: 400, fill: 2)
        let legacy = AdvertisingData([.flags(.leGeneralDiscoverableMode), .completeLocalName("Legacy set")])
        let legacyResponse = AdvertisingData([.completeLocalName("Legacy response")])
        let sets = [
            try await pair.peripheral.startAdvertisingSet(connectable, parameters: ExtendedAdvertisingParameters(isConnectable: true)),
            try await pair.peripheral.startAdvertisingSet(broadcast, parameters: ExtendedAdvertisingParameters(secondaryPHY: .le2M)),
            try await pair.peripheral.startAdvertisingSet(legacy, scanResponse: legacyResponse,
                                                          parameters: ExtendedAdvertisingParameters(isConnectable: true, usesLegacyPDUs: true)),
        ]
        #expect(Set(sets.map(\.handle)).count == 3)
        #expect(await pair.peripheral.activeAdvertisingSets.count == 3)

        let seen = try await withTimeout("all three sets") {
            var seen: [AdvertisingData: Advertisement] = [:]
            for try await advertisement in try await pair.central.scan(ScanOptions(filterDuplicates: false))
            where advertisement.peer.address == TestAddresses.peripheral {
                seen[advertisement.advertisingData] = advertisement
                if seen.count == 3 { return seen }
            }
            throw TestTimeout(description: "scan ended")
        }
        #expect(seen[connectable]?.isConnectable == true)
        #expect(seen[connectable]?.isExtended == true)
        #expect(seen[broadcast]?.isConnectable == false)
        #expect(seen[broadcast]?.secondaryPHY == .le2M)
        #expect(seen[legacy]?.isExtended == false)
        #expect(seen[legacy]?.isConnectable == true)
        // The controller has four sets by default: a fifth does not fit.
        _ = try await pair.peripheral.startAdvertisingSet(legacy, parameters: ExtendedAdvertisingParameters(usesLegacyPDUs: true))
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(legacy, parameters: ExtendedAdvertisingParameters(usesLegacyPDUs: true))
        }
        try await pair.peripheral.stopAllAdvertisingSets()
        #expect(await pair.peripheral.activeAdvertisingSets.isEmpty)
    }

    @Test func theDurationEndsTheSetWithATerminatedEvent() async throws {
        let clock = ManualClock()
        let pair = try await Self.makePair(link: .init(manualClock: clock))
        let terminations = await pair.peripheral.advertisingSetTerminations()
        var parameters = ExtendedAdvertisingParameters(intervalRange: 0xA0...0xA0)
        parameters.duration = .seconds(1)
        let set = try await pair.peripheral.startAdvertisingSet(Self.data(length: 60, fill: 3), parameters: parameters)
        clock.advance(by: .milliseconds(900))
        #expect(await pair.peripheral.activeAdvertisingSets == [set])
        clock.advance(by: .milliseconds(200))
        let termination = try await withTimeout("the terminated event") {
            for await termination in terminations { return termination }
            throw TestTimeout(description: "no termination")
        }
        #expect(termination.set.handle == set.handle)
        #expect(termination.reason == .timeout)
        // 100 ms apart (plus up to 10 ms of advDelay each), over 1 s.
        #expect((8...10).contains(termination.completedEvents))
        #expect(await pair.peripheral.activeAdvertisingSets.isEmpty)
    }

    @Test func theEventLimitEndsTheSet() async throws {
        let clock = ManualClock()
        let pair = try await Self.makePair(link: .init(manualClock: clock))
        let terminations = await pair.peripheral.advertisingSetTerminations()
        var parameters = ExtendedAdvertisingParameters(intervalRange: 0x20...0x20)
        parameters.maximumEvents = 5
        let set = try await pair.peripheral.startAdvertisingSet(Self.data(length: 40, fill: 4), parameters: parameters)
        clock.advance(by: .seconds(1))
        let termination = try await withTimeout("the terminated event") {
            for await termination in terminations { return termination }
            throw TestTimeout(description: "no termination")
        }
        #expect(termination.set == set)
        #expect(termination.reason == .limitReached)
        #expect(termination.completedEvents == 5)
    }

    @Test func aConnectionEndsTheSetAndNamesTheConnection() async throws {
        let pair = try await Self.makePair()
        let terminations = await pair.peripheral.advertisingSetTerminations()
        let set = try await pair.peripheral.startAdvertisingSet(Self.data(length: 200, fill: 5),
                                                                parameters: ExtendedAdvertisingParameters(isConnectable: true))
        let connection = try await pair.central.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(10))
        let termination = try await withTimeout("the terminated event") {
            for await termination in terminations { return termination }
            throw TestTimeout(description: "no termination")
        }
        #expect(termination.set == set)
        guard case let .connected(peripheralSide) = termination.reason else {
            Issue.record("expected a connection, got \(termination.reason)")
            return
        }
        #expect(peripheralSide.peer.address == TestAddresses.central)
        #expect(await pair.peripheral.connections.map(\.handle) == [peripheralSide.handle])
        #expect(await pair.peripheral.activeAdvertisingSets.isEmpty)
        try await connection.disconnect()
    }

    @Test func withoutExtendedAdvertisingASetThatFitsFallsBackOnLegacyAdvertising() async throws {
        var configuration = VirtualController.Configuration()
        configuration.leFeatures.remove(.extendedAdvertising)
        let pair = try await Self.makePair(peripheralConfiguration: configuration)
        #expect(await !pair.peripheral.supportsExtendedAdvertising)
        #expect(try await pair.peripheral.maximumAdvertisingDataLength() == 31)
        let data = Self.data(length: 31, fill: 6)
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(Self.data(length: 32, fill: 6))
        }
        let set = try await pair.peripheral.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters(isConnectable: true))
        #expect(set.isLegacyFallback)
        #expect(await pair.peripheral.isAdvertising)
        let advertisement = try await Self.discover(pair.central) { _ in true }
        #expect(advertisement.advertisingData == data)
        #expect(!advertisement.isExtended)
        try await pair.peripheral.stopAdvertisingSet(set)
        #expect(await !pair.peripheral.isAdvertising)
    }

    @Test func parametersThatCannotWorkAreRefusedByTheHost() async throws {
        var configuration = VirtualController.Configuration()
        configuration.maximumAdvertisingDataLength = 251
        let pair = try await Self.makePair(peripheralConfiguration: configuration)
        // Past the controller's maximum.
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(Self.data(length: 252, fill: 7))
        }
        // Extended advertising cannot be connectable and scannable at once (7.8.53).
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(AdvertisingData(), parameters: ExtendedAdvertisingParameters(isConnectable: true, isScannable: true))
        }
        // Legacy PDUs carry 31 octets.
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(Self.data(length: 40, fill: 7), parameters: ExtendedAdvertisingParameters(usesLegacyPDUs: true))
        }
        // A scan response needs a scannable set.
        await #expect(throws: HostError.self) {
            _ = try await pair.peripheral.startAdvertisingSet(AdvertisingData(), scanResponse: Self.data(length: 20, fill: 7))
        }
        #expect(await pair.peripheral.activeAdvertisingSets.isEmpty)
    }
}
