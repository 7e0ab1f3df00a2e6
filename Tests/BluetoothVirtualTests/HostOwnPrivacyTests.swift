import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
import BluetoothTransport
@testable import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
import Testing

/// This device's own privacy (``HostConfiguration/privacy``): it advertises, scans and connects
/// from resolvable private addresses made from its IRK, changed on the host's clock, never while
/// a connection attempt or a pairing runs, and never where the controller forbids it; each
/// advertising set has an address of its own; links and pairing keep the address they were made
/// with, and pairing distributes the identity and the IRK.
@Suite("Host: this device's private addresses", .timeLimit(.minutes(2)))
struct HostOwnPrivacyTests {
    static let irk: UInt128 = 0x00112233_44556677_8899AABB_CCDDEEFF
    static let lifetime: Duration = .seconds(60)

    /// A virtual controller without extended advertising: the host uses the legacy commands,
    /// where one random address serves advertising, scanning and initiating.
    static let legacyOnly: VirtualController.Configuration = {
        var configuration = VirtualController.Configuration()
        configuration.leFeatures.remove(.extendedAdvertising)
        return configuration
    }()

    static func privateConfiguration(_ clock: ManualClock, mode: PrivacySettings.Mode = .device) -> HostConfiguration {
        var configuration = HostConfiguration()
        configuration.clock = .manual(clock)
        configuration.identityResolvingKey = irk
        configuration.privacy = PrivacySettings(mode: mode, addressLifetime: lifetime)
        return configuration
    }

    /// A device with privacy on, powered on: its controller on `link` (legacy-only unless
    /// `controller` says otherwise), its host on a manual clock, between them a transport that
    /// lets a test watch, hold and change their traffic.
    static func privateDevice(on link: VirtualLink, address: BluetoothAddress, controller controllerConfiguration: VirtualController.Configuration = legacyOnly,
                              clock: ManualClock = ManualClock(), configure: (inout HostConfiguration) -> Void = { _ in })
        async throws -> (clock: ManualClock, controller: VirtualController, transport: FilteringTransport, host: LEHost) {
        let controller = link.addController(name: "private device", address: address, configuration: controllerConfiguration)
        let transport = FilteringTransport(controller.makeTransport())
        var configuration = privateConfiguration(clock)
        configure(&configuration)
        let host = LEHost(transport: transport, configuration: configuration)
        try await host.powerOn()
        return (clock, controller, transport, host)
    }

    static func isOurs(_ address: BluetoothAddress?) -> Bool {
        address.map { ResolvablePrivateAddress.resolves($0.rawValue, irk: irk) } ?? false
    }

    /// The commands the controller refused, as the host received their answers.
    static func refusals(_ transport: FilteringTransport) -> [(HCIOpcode, HCIStatus)] {
        transport.traffic.compactMap { traffic -> (HCIOpcode, HCIStatus)? in
            guard case let .received(.commandComplete(complete)) = traffic, let status = complete.returnParameters.first,
                  status != HCIStatus.success.rawValue else { return nil }
            return (complete.opcode, HCIStatus(rawValue: status))
        }
    }

    private func discover(_ scanner: LEHost, _ address: BluetoothAddress) async throws -> Advertisement {
        let found = try await withTimeout("hearing \(address)") {
            for try await advertisement in try await scanner.scan() where advertisement.peer.address == address { return advertisement }
            throw TestTimeout(description: "scan ended")
        }
        await scanner.stopScanning()
        return found
    }

    @Test func offByDefaultTheIdentityIsUsedOverTheAir() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "device", address: TestAddresses.central)
        let host = LEHost(transport: controller.makeTransport())
        try await host.powerOn()
        #expect(HostConfiguration().privacy.mode == .off)
        #expect(await host.currentPrivateAddress == nil)
        #expect(controller.randomAddress == nil, "no random address set")
        await host.shutdown()
    }

    @Test func theAddressChangesAtTheEndOfItsLifetimeOnTheHostsClock() async throws {
        let link = VirtualLink()
        let (clock, controller, _, host) = try await Self.privateDevice(on: link, address: TestAddresses.peripheral)
        let scannerController = link.addController(name: "scanner", address: TestAddresses.central, position: .init(x: 2, y: 0))
        let scanner = LEHost(transport: scannerController.makeTransport())
        try await scanner.powerOn()

        let first = try #require(await host.currentPrivateAddress)
        #expect(Self.isOurs(first), "made from this device's IRK")
        #expect(controller.randomAddress == first)
        #expect(await host.privateAddressGeneration == 1)
        // Advertising with own address type public goes out from the private address.
        try await host.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                        parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
        let heard = try await discover(scanner, first)
        #expect(heard.peer == DeviceAddress(first, type: .random))

        clock.advance(by: Self.lifetime - .seconds(1))
        #expect(await host.privateAddressGeneration == 1, "still within its lifetime")
        #expect(controller.randomAddress == first)
        clock.advance(by: .seconds(1))
        try await waitUntil("the address changes") { await host.privateAddressGeneration == 2 }
        let second = try #require(await host.currentPrivateAddress)
        #expect(second != first)
        #expect(Self.isOurs(second))
        #expect(controller.randomAddress == second)
        #expect(await host.isAdvertising, "advertising was paused for the change and goes on")
        try await waitUntil("advertising again") { controller.isAdvertising }
        let again = try await discover(scanner, second)
        #expect(again.peer == DeviceAddress(second, type: .random))

        // And again one lifetime later.
        clock.advance(by: Self.lifetime)
        try await waitUntil("the address changes again") { controller.randomAddress != second }
        #expect(Self.isOurs(controller.randomAddress))
        await host.shutdown()
        await scanner.shutdown()
    }

    /// A change the controller refuses is tried again on a timer, 2 s and then twice as long
    /// after each refusal in a row, rather than left until a connection attempt or a pairing
    /// ends: until then the old address would stay in use past its lifetime.
    @Test func aRefusedChangeIsTriedAgainAfterAWhile() async throws {
        let (clock, controller, transport, host) = try await Self.privateDevice(on: VirtualLink(), address: TestAddresses.peripheral)
        let first = try #require(await host.currentPrivateAddress)

        transport.refuseCommands(LESetRandomAddressCommand.opcode, times: 2)
        let delay = LocalAddressRotation.firstRetryDelay

        clock.advance(by: Self.lifetime)
        try await waitUntil("the change refused") { transport.refusalsMade == 1 }
        let firstRetry = clock.now + delay
        try await waitUntil("the retry's timer armed") { clock.deadlines.contains(firstRetry) }
        #expect(await host.privateAddressGeneration == 1)
        #expect(await host.currentPrivateAddress == first, "the address in use stays")

        clock.advance(by: delay)
        try await waitUntil("the retry refused") { transport.refusalsMade == 2 }
        let secondRetry = clock.now + delay * 2
        try await waitUntil("the next retry's timer armed, twice as far") { clock.deadlines.contains(secondRetry) }
        #expect(await host.privateAddressGeneration == 1)

        clock.advance(by: delay * 2)
        try await waitUntil("the address changes") { await host.privateAddressGeneration == 2 }
        let second = try #require(await host.currentPrivateAddress)
        #expect(second != first)
        #expect(Self.isOurs(second))
        #expect(controller.randomAddress == second)
        let nextRotation = clock.now + Self.lifetime
        try await waitUntil("the rotation's timer armed again") { clock.deadlines.contains(nextRotation) }
        await host.shutdown()
    }

    /// A device advertising two sets of its own, and the sets' addresses as its host knows them.
    static func deviceWithTwoSets() async throws
        -> (clock: ManualClock, controller: VirtualController, transport: FilteringTransport, host: LEHost, sets: [UInt8]) {
        let (clock, controller, transport, host) = try await privateDevice(on: VirtualLink(), address: TestAddresses.peripheral, controller: .init())
        let data = AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])])
        let sets = [try await host.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters(isConnectable: true)).handle,
                    try await host.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters()).handle]
        return (clock, controller, transport, host, sets)
    }

    /// The addresses' lifetime ends and the controller refuses the next `refusals` LE Set
    /// Advertising Set Random Address: returns the time of the change once the retry's timer
    /// is armed.
    static func endLifetimeRefusingSets(_ refusals: Int, clock: ManualClock, transport: FilteringTransport) async throws -> Duration {
        transport.refuseCommands(LESetAdvertisingSetRandomAddressCommand.opcode, times: refusals)
        clock.advance(by: lifetime)
        let changedAt = clock.now
        try await waitUntil("the retry's timer armed") { clock.deadlines.contains(changedAt + LocalAddressRotation.firstRetryDelay) }
        return changedAt
    }

    /// ``deviceWithTwoSets()`` after ``endLifetimeRefusingSets(_:clock:transport:)``.
    static func deviceWithRefusedSets(_ refusals: Int) async throws
        -> (clock: ManualClock, controller: VirtualController, transport: FilteringTransport, host: LEHost, sets: [UInt8], changedAt: Duration) {
        let (clock, controller, transport, host, sets) = try await deviceWithTwoSets()
        let changedAt = try await endLifetimeRefusingSets(refusals, clock: clock, transport: transport)
        return (clock, controller, transport, host, sets, changedAt)
    }

    static func addresses(of sets: [UInt8], on host: LEHost) async -> [BluetoothAddress?] {
        var addresses: [BluetoothAddress?] = []
        for handle in sets { addresses.append(await host.randomAddress(ofSet: handle)) }
        return addresses
    }

    /// The controller's address changed, then it refused an advertising set's: that set is
    /// tried again on the retry timer without a new controller address, and the set after it
    /// changes at once. Before, the change counted as made, and both sets kept their old
    /// addresses (beside the controller's new one) for one more lifetime.
    @Test func aRefusedSetAddressIsTriedAgainAndHoldsBackNoOtherSet() async throws {
        let (clock, controller, transport, host, sets) = try await Self.deviceWithTwoSets()
        let before = await Self.addresses(of: sets, on: host)
        #expect(before.allSatisfy(Self.isOurs), "\(before)")
        let changedAt = try await Self.endLifetimeRefusingSets(1, clock: clock, transport: transport)
        #expect(transport.refusalsMade == 1)
        #expect(await host.privateAddressGeneration == 2, "the controller's address changed")
        let meanwhile = await Self.addresses(of: sets, on: host)
        #expect(meanwhile[0] == before[0], "the refused set keeps its address, for now")
        #expect(meanwhile[1] != before[1] && Self.isOurs(meanwhile[1]), "the set after it changed all the same")
        let controllerAddressChanges = transport.sentCommands.filter { $0 == LESetRandomAddressCommand.opcode }.count

        clock.advance(by: LocalAddressRotation.firstRetryDelay)
        try await waitUntil("the refused set has a new address") {
            let now = await Self.addresses(of: sets, on: host)
            return now[0] != before[0] && Self.isOurs(now[0])
        }
        let after = await Self.addresses(of: sets, on: host)
        #expect(after[1] == meanwhile[1], "the retry was for the refused set only")
        #expect(sets.map { controller.randomAddress(ofAdvertisingSet: $0) } == after)
        #expect(await host.privateAddressGeneration == 2, "the retry made no new controller address")
        #expect(transport.sentCommands.filter { $0 == LESetRandomAddressCommand.opcode }.count == controllerAddressChanges)
        #expect(await host.addressRotation?.failedChanges == 0, "the change is whole")
        try await waitUntil("the rotation's timer armed for the controller address's lifetime") {
            clock.deadlines.contains(changedAt + Self.lifetime)
        }
        try await waitUntil("both sets advertise again") { sets.allSatisfy { controller.isAdvertising(set: $0) } }
        #expect(await host.activeAdvertisingSets.count == 2)
        await host.shutdown()
    }

    /// A set the controller always refuses is tried on the retry timer, which never reaches past
    /// the lifetime: at its end every address changes as usual. Before, the retries took the
    /// rotation's place and the controller's address never changed again.
    @Test func aSetRefusedForeverHoldsNoOtherAddressPastItsLifetime() async throws {
        let (clock, _, transport, host, _, changedAt) = try await Self.deviceWithRefusedSets(.max)
        #expect(transport.refusalsMade == 2, "both sets refused")
        #expect(await host.privateAddressGeneration == 2)
        var refusals = transport.refusalsMade
        // Tries at +2, +6, +14, +30 s, then at the lifetime's end (not at +62 s).
        for retry in [2, 6, 14, 30, 60] {
            let deadline = changedAt + .seconds(retry)
            try await waitUntil("the timer armed at +\(retry) s") { clock.deadlines.contains(deadline) }
            clock.advance(to: deadline)
            try await waitUntil("the sets tried again at +\(retry) s") { transport.refusalsMade == refusals + 2 }
            refusals = transport.refusalsMade
        }
        try await waitUntil("the next change at the lifetime's end") { await host.privateAddressGeneration == 3 }
        await host.shutdown()
    }

    /// The retry timer fired after the app stopped the sets it was for: nothing is left to
    /// change, and the rotation's timer must be armed again. Before, no timer was, and the
    /// addresses never changed again.
    @Test func aRetryWithNothingLeftArmsTheRotationAgain() async throws {
        let (clock, _, _, host, sets, changedAt) = try await Self.deviceWithRefusedSets(2)
        for handle in sets { try await host.stopAdvertisingSet(AdvertisingSet(handle: handle)) }
        clock.advance(by: LocalAddressRotation.firstRetryDelay)
        try await waitUntil("the rotation's timer armed for the lifetime's end") { clock.deadlines.contains(changedAt + Self.lifetime) }
        clock.advance(to: changedAt + Self.lifetime)
        try await waitUntil("the next change") { await host.privateAddressGeneration == 3 }
        await host.shutdown()
    }

    /// The lifetime ended while another change held the addressing gate (the retry for a set,
    /// after a connection attempt ended). That change's end armed the next timer, which
    /// cancelled the one that had fired and was waiting for the gate: its change was never made,
    /// and with every address due no timer was armed again.
    @Test func theLifetimesEndDuringAnotherChangeIsNotLost() async throws {
        let (clock, _, transport, host, _, changedAt) = try await Self.deviceWithRefusedSets(1)
        let lifetimeEnd = changedAt + Self.lifetime
        // A connection attempt holds the retry back; the rotation's timer is armed meanwhile.
        let attempt = Task { try await host.connect(to: DeviceAddress(TestAddresses.third, type: .public), timeout: nil) }
        try await waitUntil("initiating") { await host.isConnecting }
        clock.advance(by: LocalAddressRotation.firstRetryDelay)
        try await waitUntil("the rotation's timer armed") { clock.deadlines.contains(lifetimeEnd) }

        // Just before the lifetime's end, the attempt ends: the set's retry starts and waits
        // for the controller's answer, holding the gate.
        clock.advance(to: lifetimeEnd - .seconds(1))
        transport.holdIncoming { event in
            guard case let .commandComplete(complete) = event else { return false }
            return complete.opcode == LESetAdvertisingSetRandomAddressCommand.opcode
        }
        attempt.cancel()
        _ = try? await attempt.value
        try await waitUntil("the retry's command answered and held") { !transport.held.isEmpty }
        clock.advance(to: lifetimeEnd)
        try await waitUntil("the lifetime's end seen") { await host.addressRotation?.isDue == true }
        transport.releaseHeld()
        try await waitUntil("the change the lifetime's end called for") { await host.privateAddressGeneration == 3 }
        await host.shutdown()
    }

    /// Advertising restarted while a change had not reached its set: the set takes a new address,
    /// not the one from before the change.
    @Test func advertisingRestartedBeforeItsSetChangedTakesANewAddress() async throws {
        let (clock, controller, transport, host) = try await Self.privateDevice(on: VirtualLink(), address: TestAddresses.peripheral, controller: .init())
        let data = AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])])
        try await host.startAdvertising(data)
        let legacySet = try #require(controller.advertisingSetHandles.first)
        let before = try #require(await host.randomAddress(ofSet: legacySet))
        _ = try await Self.endLifetimeRefusingSets(1, clock: clock, transport: transport)
        #expect(await host.randomAddress(ofSet: legacySet) == before)

        try await host.startAdvertising(data)
        let restarted = try #require(await host.randomAddress(ofSet: legacySet))
        #expect(restarted != before && Self.isOurs(restarted), "not the address from before the change")
        #expect(controller.randomAddress(ofAdvertisingSet: legacySet) == restarted)
        #expect(await host.addressRotation?.isChangePending == false)
        await host.shutdown()
    }

    /// A set the controller ended on its own takes its address with it: the next set given its
    /// handle gets a new one, so the two cannot be linked. Before, it advertised from the ended
    /// set's address.
    @Test func aSetEndedByTheControllerTakesItsAddressWithIt() async throws {
        let clock = ManualClock()
        let (_, controller, _, host) = try await Self.privateDevice(on: VirtualLink(configuration: .init(manualClock: clock)), address: TestAddresses.peripheral,
                                                                      controller: .init(), clock: clock)
        let terminations = await host.advertisingSetTerminations()
        let data = AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])])
        var parameters = ExtendedAdvertisingParameters(intervalRange: 0x20...0x20)
        parameters.maximumEvents = 5
        let first = try await host.startAdvertisingSet(data, parameters: parameters)
        let firstAddress = try #require(await host.randomAddress(ofSet: first.handle))
        clock.advance(by: .seconds(1))
        let termination = try await withTimeout("the set's end") {
            for await termination in terminations { return termination }
            throw TestTimeout(description: "no termination")
        }
        #expect(termination.reason == .limitReached)

        let second = try await host.startAdvertisingSet(data)
        #expect(second.handle == first.handle, "the handle is free again")
        let secondAddress = try #require(await host.randomAddress(ofSet: second.handle))
        #expect(secondAddress != firstAddress && Self.isOurs(secondAddress))
        #expect(controller.randomAddress(ofAdvertisingSet: second.handle) == secondAddress)
        await host.shutdown()
    }

    /// Failures in a row end when the controller's address changes, and when the whole change
    /// is made, the sets' addresses included.
    @Test func failuresCountUntilTheSetsAddressesChangeToo() {
        var rotation = LocalAddressRotation(irk: Self.irk, lifetime: .seconds(30))
        let now = BluetoothClock.manual(ManualClock()).now
        rotation.didSetDeviceAddress(rotation.makeAddress(), at: now)
        rotation.didSetAddress(rotation.makeAddress(), ofSet: 1)
        rotation.didSetAddress(rotation.makeAddress(), ofSet: 2)
        #expect(!rotation.isChangePending)
        rotation.isDue = true
        #expect(rotation.changeFailed() == .seconds(2), "the controller's address refused")
        rotation.didSetDeviceAddress(rotation.makeAddress(), at: now)
        #expect(rotation.failedChanges == 0, "its new address starts the count over")
        #expect(rotation.staleSets == [1, 2])
        #expect(rotation.isChangePending && !rotation.isDue)
        #expect(rotation.changeFailed() == .seconds(2))
        #expect(rotation.changeFailed() == .seconds(4), "the sets' failures count in a row")
        rotation.didSetAddress(rotation.makeAddress(), ofSet: 1)
        #expect(rotation.failedChanges == 2, "one set is left")
        rotation.forgetSet(2)
        #expect(!rotation.isChangePending)
        #expect(rotation.failedChanges == 0)
    }

    @Test func theRetryWaitDoublesUpToOneLifetimeAndStartsOverAfterAChange() {
        var rotation = LocalAddressRotation(irk: Self.irk, lifetime: .seconds(30))
        let waits = (0..<6).map { _ in rotation.changeFailed() }
        #expect(waits == [.seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)])
        rotation.didSetDeviceAddress(rotation.makeAddress(), at: BluetoothClock.manual(ManualClock()).now)
        #expect(rotation.failedChanges == 0)
        #expect(rotation.changeFailed() == .seconds(2))
    }

    @Test func aRunningScanIsPausedForTheChangeAndGoesOn() async throws {
        let link = VirtualLink()
        let (clock, controller, _, host) = try await Self.privateDevice(on: link, address: TestAddresses.central)
        let advertiserController = link.addController(name: "advertiser", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let advertiser = LEHost(transport: advertiserController.makeTransport())
        try await advertiser.powerOn()
        try await advertiser.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                              parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
        let heard = Mutex(0)
        try await host.scan(ScanOptions(filterDuplicates: false)) { advertisements in heard.withLock { $0 += advertisements.count } }
        try await waitUntil("hearing the advertiser") { heard.withLock { $0 } > 0 }
        let first = controller.randomAddress
        clock.advance(by: Self.lifetime)
        try await waitUntil("the address changes") { controller.randomAddress != first }
        #expect(await host.isScanning)
        let before = heard.withLock { $0 }
        try await waitUntil("hearing the advertiser after the change") { heard.withLock { $0 } > before }
        #expect(controller.isScanning)
        await host.shutdown()
        await advertiser.shutdown()
    }

    @Test func theChangeWaitsForAConnectionAttemptToEnd() async throws {
        let (clock, controller, transport, host) = try await Self.privateDevice(on: VirtualLink(), address: TestAddresses.central)
        let first = controller.randomAddress
        // Nobody advertises at this address: the attempt runs until cancelled.
        let absent = DeviceAddress(TestAddresses.third, type: .public)
        let attempt = Task { try await host.connect(to: absent, timeout: nil) }
        // The host must have had LE Create Connection's Command Status before the clock jumps:
        // its command timer runs on this clock too.
        try await waitUntil("initiating") { await host.isConnecting }
        #expect(controller.isInitiating)
        clock.advance(by: Self.lifetime * 2)
        // The deadline passed; nothing may change while the controller initiates.
        try await waitUntil("the host to see the deadline") { await host.addressRotation?.isDue == true }
        #expect(controller.randomAddress == first, "the attempt's address holds")
        #expect(await host.privateAddressGeneration == 1)
        let sentWhileInitiating = transport.sentCommands.drop { $0 != LECreateConnectionCommand.opcode }
        #expect(!sentWhileInitiating.contains(LESetRandomAddressCommand.opcode),
                "no LE Set Random Address while initiating: the controller would refuse it (7.8.4)")
        attempt.cancel()
        await #expect(throws: HostError.cancelled) { _ = try await attempt.value }
        try await waitUntil("the change once the attempt ended") { controller.randomAddress != first }
        #expect(Self.isOurs(controller.randomAddress))
        #expect(!controller.isInitiating)
        #expect(Self.refusals(transport).isEmpty, "\(Self.refusals(transport))")
        await host.shutdown()
    }

    @Test func eachAdvertisingSetHasAnAddressOfItsOwnAndAllChange() async throws {
        let (clock, controller, _, host) = try await Self.privateDevice(on: VirtualLink(), address: TestAddresses.peripheral, controller: .init())
        #expect(await host.supportsExtendedAdvertising)
        let data = AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])])
        let connectable = try await host.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters(isConnectable: true))
        let beacon = try await host.startAdvertisingSet(data, parameters: ExtendedAdvertisingParameters())
        // Legacy advertising runs on a set of legacy PDUs of its own.
        try await host.startAdvertising(data)
        let legacySet = try #require(controller.advertisingSetHandles.first { $0 != connectable.handle && $0 != beacon.handle })

        func addresses() -> [BluetoothAddress?] {
            [controller.randomAddress] + [connectable.handle, beacon.handle, legacySet].map { controller.randomAddress(ofAdvertisingSet: $0) }
        }
        let before = addresses()
        #expect(before.allSatisfy(Self.isOurs), "\(before)")
        #expect(Set(before.compactMap { $0 }).count == 4, "no two sets share an address: they cannot be linked")
        clock.advance(by: Self.lifetime)
        // The change is made once every set advertises again.
        try await waitUntil("the addresses change and the sets advertise again") {
            controller.randomAddress != before[0] && controller.isAdvertising && controller.advertisingSetHandles.allSatisfy {
                controller.randomAddress(ofAdvertisingSet: $0).map { !before.contains($0) } ?? false
            }
        }
        let after = addresses()
        #expect(after.allSatisfy(Self.isOurs), "\(after)")
        #expect(Set(after.compactMap { $0 }).count == 4)
        #expect(Set(after.compactMap { $0 }).isDisjoint(with: Set(before.compactMap { $0 })), "every set changed its address")
        #expect(await host.activeAdvertisingSets.count == 2, "the app's sets advertise again")
        #expect(await host.isAdvertising)
        await host.shutdown()
    }

    @Test func aLinkAndItsPairingKeepTheAddressItWasMadeWith() async throws {
        let link = VirtualLink()
        let (clock, peripheralController, _, peripheral) = try await Self.privateDevice(on: link, address: TestAddresses.peripheral, controller: .init())
        let centralController = link.addController(name: "central", address: TestAddresses.central, position: .init(x: 2, y: 0))
        var centralConfiguration = HostConfiguration()
        centralConfiguration.bondStore = InMemoryBondStore()
        let central = LEHost(transport: centralController.makeTransport(), configuration: centralConfiguration)
        try await central.powerOn()
        try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                              parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
        let legacySet = try #require(peripheralController.advertisingSetHandles.first)
        let advertisedFrom = try #require(peripheralController.randomAddress(ofAdvertisingSet: legacySet))
        let connection = try await central.connect(to: DeviceAddress(advertisedFrom, type: .random), timeout: .seconds(10))
        let peripheralSide = try #require(await peripheral.connections.first)
        #expect(peripheralSide.local == DeviceAddress(advertisedFrom, type: .random), "the set's address, from its LE Advertising Set Terminated")

        // The addresses change while the link is up; the link and its pairing keep the old one.
        clock.advance(by: Self.lifetime)
        try await waitUntil("the addresses change") { await peripheral.privateAddressGeneration == 2 }
        #expect(peripheralSide.local == DeviceAddress(advertisedFrom, type: .random))
        #expect(connection.isConnected)
        let security = try await central.pair(connection)
        #expect(security.isEncrypted && security.isBonded, "c1/f5 took the addresses of the link")
        // Pairing distributed the identity (the public address) and the IRK.
        let bond = try #require(await central.bonds().first)
        #expect(bond.peerIdentity == DeviceAddress(TestAddresses.peripheral, type: .public))
        #expect(bond.peerKeys.identityResolvingKey == Self.irk)
        #expect(connection.identity == bond.peerIdentity, "the private address resolves with the IRK distributed")
        try await connection.disconnect()
        await peripheral.shutdown()
        await central.shutdown()
    }

    /// The change pauses advertising, and a central may have connected through it just before:
    /// the controller's LE Connection Complete and its answer to the pause come in one read, and
    /// the answer resumes the host's change before the connection's event reaches the host. The
    /// change waits until the host has seen that event, so the link keeps the address it was
    /// made with (the one the central paired with) and the advertising that the connection ended
    /// stays ended.
    @Test func aConnectionThatCameJustBeforeThePauseKeepsItsAddress() async throws {
        let link = VirtualLink()
        let (clock, peripheralController, transport, peripheral) = try await Self.privateDevice(on: link, address: TestAddresses.peripheral)
        let centralController = link.addController(name: "central", address: TestAddresses.central, position: .init(x: 2, y: 0))
        // The central asks nothing of the peripheral's host as the link comes up (which holds it all).
        var centralConfiguration = HostConfiguration()
        centralConfiguration.exchangesMTUOnConnect = false
        centralConfiguration.requestsDataLengthExtension = false
        let central = LEHost(transport: centralController.makeTransport(), configuration: centralConfiguration)
        try await central.powerOn()
        try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                              parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
        let first = try #require(peripheralController.randomAddress)
        // The peripheral's host hears nothing from its controller from the connection on.
        transport.holdEverything { if case .le(.connectionComplete) = $0 { return true }; if case .le(.enhancedConnectionComplete) = $0 { return true }; return false }
        let connection = try await central.connect(to: DeviceAddress(first, type: .random), timeout: .seconds(10))
        try await waitUntil("the connection's event held") { !transport.held.isEmpty }
        // The address's lifetime ends: the host pauses the advertising; that answer is held too.
        clock.advance(by: Self.lifetime)
        try await waitUntil("the pause's answer held") {
            transport.held.contains { packet in
                guard case let .commandComplete(complete)? = try? HCIEvent.decode(packet.bytes) else { return false }
                return complete.opcode == LESetAdvertisingEnableCommand.opcode
            }
        }
        transport.releaseHeld()
        try await waitUntil("the change") { await peripheral.privateAddressGeneration == 2 }
        let peripheralSide = try #require(await peripheral.connections.first)
        #expect(peripheralSide.local == DeviceAddress(first, type: .random), "the link was made with the address before the change")
        #expect(!(await peripheral.isAdvertising), "the connection ended the advertising; the change does not restart it")
        #expect(!peripheralController.isAdvertising)
        let security = try await central.pair(connection)
        #expect(security.isEncrypted, "both sides paired with the addresses of the link")
        try await connection.disconnect()
        await peripheral.shutdown()
        await central.shutdown()
    }

    /// A user who never answers: the question ends only when the pairing does.
    struct SilentAgent: PairingAgent {
        func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    Self.waiting.withLock { $0.append(continuation) }
                }
            } onCancel: {
                Self.waiting.withLock { waiting in
                    waiting.forEach { $0.resume() }
                    waiting = []
                }
            }
            return false
        }

        static let waiting = Mutex<[CheckedContinuation<Void, Never>]>([])
    }

    /// A change that came due while a pairing ran is made once that pairing ends, whichever way
    /// it ends: before, no timer was armed and only the end of a connection attempt let it
    /// through, so one pairing across the deadline (a peer's, left to time out) kept the
    /// address for good.
    @Test func aChangeHeldBackByAPairingIsMadeWhenThePairingFails() async throws {
        let link = VirtualLink()
        let (clock, peripheralController, _, peripheral) = try await Self.privateDevice(on: link, address: TestAddresses.peripheral) { configuration in
            configuration.security = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
            // The Security Manager Timer outlasts the address: the pairing is still running at the deadline.
            configuration.security.timeout = Self.lifetime * 2
        }
        await peripheral.setPairingAgent(SilentAgent())
        let centralController = link.addController(name: "central", address: TestAddresses.central, position: .init(x: 2, y: 0))
        var centralConfiguration = HostConfiguration()
        centralConfiguration.security = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        let central = LEHost(transport: centralController.makeTransport(), configuration: centralConfiguration)
        // The central's user does not answer either: a refusal would end the pairing at once, and
        // its end must be the peripheral's Security Manager Timer, not a race with the test's
        // clock (a refusal just before the second advance left the address change's command in
        // flight across 60 s of the host's clock: it timed out, and the change was lost).
        await central.setPairingAgent(SilentAgent())
        try await central.powerOn()
        try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                              parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
        let first = try #require(peripheralController.randomAddress)
        let connection = try await central.connect(to: DeviceAddress(first, type: .random), timeout: .seconds(10))
        let pairing = Task { try await central.pair(connection) }
        try await waitUntil("both users are asked") { SilentAgent.waiting.withLock { $0.count } == 2 }

        clock.advance(by: Self.lifetime)
        try await waitUntil("the host to see the deadline") { await peripheral.addressRotation?.isDue == true }
        #expect(await peripheral.privateAddressGeneration == 1, "no change while the pairing runs")
        // The pairing times out on the peripheral's clock.
        clock.advance(by: Self.lifetime)
        try await waitUntil("the change once the pairing ended") { await peripheral.privateAddressGeneration == 2 }
        #expect(Self.isOurs(peripheralController.randomAddress))
        #expect(peripheralController.randomAddress != first)
        pairing.cancel()
        _ = try? await pairing.value
        await peripheral.shutdown()
        await central.shutdown()
    }
}
