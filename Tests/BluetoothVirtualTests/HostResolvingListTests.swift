import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
import Testing

/// Resolution in the controller: on a controller with LL Privacy the host keeps the resolving
/// list in step with the bonds (at power-on, on bonding, on removal, paused around what uses the
/// list), the controller resolves, and the host resolves only what the list has no room for.
@Suite("Host: the controller's resolving list", .timeLimit(.minutes(2)))
struct HostResolvingListTests {
    static let localIdentity = DeviceAddress(TestAddresses.central, type: .public)

    /// A virtual controller with LL Privacy, holding `size` entries.
    static func llPrivacy(size: Int = 8) -> VirtualController.Configuration {
        var configuration = VirtualController.Configuration()
        configuration.leFeatures.insert(.llPrivacy)
        configuration.resolvingListSize = size
        return configuration
    }

    /// A bonded peer: its identity (public), its IRK, and the bond the central keeps.
    struct Peer {
        var identity: DeviceAddress
        var irk: UInt128
        var bond: Bond { Bond(localIdentity: HostResolvingListTests.localIdentity, peerIdentity: identity,
                              peerKeys: BondKeys(longTermKey: 0x42, identityResolvingKey: irk, identityAddress: identity)) }
        func privateAddress() -> BluetoothAddress { BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: irk)) }
    }

    static func peer(_ index: UInt64) -> Peer {
        Peer(identity: DeviceAddress(BluetoothAddress(rawValue: 0xC0DE_0000_0000 | index), type: .public), irk: 0x1000 + UInt128(index))
    }

    /// Makes `host` advertise, connectably, from `address`.
    private func advertise(_ host: LEHost, from address: BluetoothAddress) async throws {
        try await host.stopAdvertising()
        try await host.setRandomAddress(address)
        var parameters = AdvertisingParameters(intervalRange: 0x0030...0x0030)
        parameters.ownAddressType = .random
        try await host.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]), parameters: parameters)
    }

    private func discover(_ scanner: LEHost, where matches: @escaping @Sendable (Advertisement) -> Bool) async throws -> Advertisement {
        let found = try await withTimeout("hearing the peer") {
            for try await advertisement in try await scanner.scan() where matches(advertisement) { return advertisement }
            throw TestTimeout(description: "scan ended")
        }
        await scanner.stopScanning()
        return found
    }

    @Test func theBondsFillTheListAtPowerOnAndTheControllerResolves() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "central", address: TestAddresses.central, configuration: Self.llPrivacy())
        let store = InMemoryBondStore()
        let peers = (1...3).map(Self.peer)
        for peer in peers { await store.save(peer.bond) }
        // A bond without an IRK: the peer uses its identity address, nothing to resolve.
        let plain = DeviceAddress(BluetoothAddress(rawValue: 0xC0DE_0000_00FF), type: .public)
        await store.save(Bond(localIdentity: Self.localIdentity, peerIdentity: plain, peerKeys: BondKeys(longTermKey: 0x43)))
        var configuration = HostConfiguration()
        configuration.bondStore = store
        let central = LEHost(transport: controller.makeTransport(), configuration: configuration)
        try await central.powerOn()
        #expect(Set(controller.resolvingList) == Set(peers.map(\.identity)))
        #expect(controller.isAddressResolutionEnabled)
        // Privacy off: peers are accepted at their identity address too, and no local IRK is given.
        #expect(peers.allSatisfy { controller.privacyMode(of: $0.identity) == .device })
        #expect(controller.localIRK(of: peers[0].identity) == [UInt8](repeating: 0, count: 16))
        #expect(await central.controllerResolvedIdentities == Set(peers.map(\.identity)))
        #expect(central.addressResolver.controllerResolvedIdentities == Set(peers.map(\.identity)))

        // The controller reports a peer at a private address with its identity (type 0x02); the
        // host runs no `ah`.
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let peripheral = LEHost(transport: peripheralController.makeTransport())
        try await peripheral.powerOn()
        let rpa = peers[1].privateAddress()
        try await advertise(peripheral, from: rpa)
        let advertisement = try await discover(central) { $0.identity == peers[1].identity }
        #expect(advertisement.peer == DeviceAddress(peers[1].identity.address, type: .publicIdentity))
        #expect(advertisement.identifier == PeripheralIdentifier(address: peers[1].identity))
        #expect(central.addressResolver.evaluations == 0, "resolved in the controller")

        // Connecting to the identity goes through the list: the controller finds the peer.
        let connection = try await central.connect(to: peers[1].identity, timeout: .seconds(10))
        #expect(connection.peer == DeviceAddress(rpa, type: .random), "the address over the air, for SMP")
        #expect(connection.identity == peers[1].identity)
        #expect(await central.bond(for: connection)?.peerIdentity == peers[1].identity)
        #expect(central.addressResolver.evaluations == 0)
        try await connection.disconnect()
        await central.shutdown()
        await peripheral.shutdown()
    }

    @Test func aFullListLeavesTheRestToTheHost() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "central", address: TestAddresses.central, configuration: Self.llPrivacy(size: 1))
        let store = InMemoryBondStore()
        let (inList, overflow) = (Self.peer(1), Self.peer(2))
        var first = inList.bond
        first.createdAt = 1
        var second = overflow.bond
        second.createdAt = 2
        await store.save(second)
        await store.save(first)
        var configuration = HostConfiguration()
        configuration.bondStore = store
        let central = LEHost(transport: controller.makeTransport(), configuration: configuration)
        try await central.powerOn()
        #expect(controller.resolvingList == [inList.identity], "the oldest bond holds the one entry")
        #expect(central.addressResolver.controllerResolvedIdentities == [inList.identity])

        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let peripheral = LEHost(transport: peripheralController.makeTransport())
        try await peripheral.powerOn()
        // The peer that did not fit is resolved by the host: one `ah` with its IRK only.
        try await advertise(peripheral, from: overflow.privateAddress())
        let heard = try await discover(central) { $0.identity == overflow.identity }
        #expect(heard.peer.type == .random, "over the air: the controller could not resolve it")
        #expect(central.addressResolver.evaluations == 1, "the host tried the IRK the list has no room for, not the other")
        // A stranger's private address costs one `ah` too: the IRK in the list is not tried.
        let stranger = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: 0xBAD))
        try await advertise(peripheral, from: stranger)
        let unknown = try await discover(central) { $0.peer.address == stranger }
        #expect(unknown.identity == nil)
        #expect(central.addressResolver.evaluations == 2)
        try await advertise(peripheral, from: overflow.privateAddress())
        let connection = try await central.connect(to: overflow.identity, timeout: .seconds(10))
        #expect(connection.identity == overflow.identity)
        try await connection.disconnect()

        // Removing the bond in the list frees the entry: the other one takes it.
        #expect(try await central.removeBond(with: inList.identity))
        try await waitUntil("the list follows the bonds") { controller.resolvingList == [overflow.identity] }
        try await waitUntil("the host leaves it to the controller") {
            central.addressResolver.controllerResolvedIdentities == [overflow.identity]
        }
        await central.shutdown()
        await peripheral.shutdown()
    }

    @Test func bondingAndRemovingChangeTheListWhileScanningPausedAroundIt() async throws {
        let link = VirtualLink()
        let centralController = link.addController(name: "central", address: TestAddresses.central, configuration: Self.llPrivacy())
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        let transport = FilteringTransport(centralController.makeTransport())
        var centralConfiguration = HostConfiguration()
        centralConfiguration.bondStore = InMemoryBondStore()
        let central = LEHost(transport: transport, configuration: centralConfiguration)
        var peripheralConfiguration = HostConfiguration()
        let irk: UInt128 = 0x5EED_0000_0000_0001
        peripheralConfiguration.identityResolvingKey = irk
        let peripheral = LEHost(transport: peripheralController.makeTransport(), configuration: peripheralConfiguration)
        try await central.powerOn()
        try await peripheral.powerOn()
        #expect(centralController.resolvingList.isEmpty)
        #expect(centralController.isAddressResolutionEnabled)
        let rpa = BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: irk))
        try await advertise(peripheral, from: rpa)

        let connection = try await central.connect(to: DeviceAddress(rpa, type: .random), timeout: .seconds(10))
        // The central scans while it pairs: the list changes under a paused scan.
        let heard = Mutex<[Advertisement]>([])
        try await central.scan(ScanOptions(filterDuplicates: false)) { advertisements in heard.withLock { $0 += advertisements } }
        let security = try await central.pair(connection)
        #expect(security.isBonded)
        let identity = DeviceAddress(TestAddresses.peripheral, type: .public)
        try await waitUntil("the bond enters the list, in device privacy mode, and the scan goes on") {
            centralController.resolvingList == [identity] && centralController.privacyMode(of: identity) == .device && centralController.isScanning
        }
        #expect(connection.identity == identity)
        #expect(await central.isScanning, "the scan goes on")
        #expect(HostOwnPrivacyTests.refusals(transport).isEmpty, "nothing was refused: the list changed while the scan was paused")
        try await connection.disconnect()
        // Heard again, now resolved by the controller.
        try await advertise(peripheral, from: rpa)
        heard.withLock { $0 = [] }
        try await waitUntil("the peer reported with its identity") {
            heard.withLock { $0.contains { $0.peer == DeviceAddress(identity.address, type: .publicIdentity) } }
        }

        #expect(try await central.removeBond(with: identity))
        try await waitUntil("the entry leaves the list and the scan goes on") { centralController.resolvingList.isEmpty && centralController.isScanning }
        #expect(await central.isScanning)
        #expect(HostOwnPrivacyTests.refusals(transport).isEmpty)
        await central.stopScanning()
        await central.shutdown()
        await peripheral.shutdown()
    }

    @Test func anIdentityIsConnectedAfterARestartWithoutAScan() async throws {
        for usesList in [true, false] {
            let link = VirtualLink()
            let centralController = link.addController(name: "central", address: TestAddresses.central,
                                                       configuration: usesList ? Self.llPrivacy() : .init())
            let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
            let peer = Self.peer(7)
            let store = InMemoryBondStore()
            await store.save(peer.bond)
            let peripheral = LEHost(transport: peripheralController.makeTransport())
            try await peripheral.powerOn()
            let rpa = peer.privateAddress()
            try await advertise(peripheral, from: rpa)
            // A host that never heard the peer: it starts with the bond and nothing else.
            var configuration = HostConfiguration()
            configuration.bondStore = store
            let transport = FilteringTransport(centralController.makeTransport())
            let central = LEHost(transport: transport, configuration: configuration)
            try await central.powerOn()
            let connection = try await central.connect(to: peer.identity, timeout: .seconds(10))
            #expect(connection.peer == DeviceAddress(rpa, type: .random), "list \(usesList)")
            #expect(connection.identity == peer.identity)
            if usesList {
                #expect(central.addressResolver.evaluations == 0, "the controller found and resolved it")
                #expect(!transport.sentCommands.contains(LESetExtendedScanEnableCommand.opcode), "no scan")
            } else {
                #expect(transport.sentCommands.contains(LESetExtendedScanEnableCommand.opcode), "the host listened for it itself")
                #expect(!(await central.isScanning), "and stopped listening before connecting")
            }
            try await connection.disconnect()
            await central.shutdown()
            await peripheral.shutdown()
        }
    }

    @Test func networkPrivacyModeIgnoresABondedPeerAtItsIdentityAddress() async throws {
        for (mode, usesList) in [(PrivacySettings.Mode.network, true), (.network, false), (.device, true), (.device, false)] {
            let link = VirtualLink()
            let centralController = link.addController(name: "central", address: TestAddresses.central,
                                                       configuration: usesList ? Self.llPrivacy() : .init())
            let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
            let identity = DeviceAddress(TestAddresses.peripheral, type: .public)
            let store = InMemoryBondStore()
            await store.save(Bond(localIdentity: Self.localIdentity, peerIdentity: identity,
                                  peerKeys: BondKeys(longTermKey: 0x42, identityResolvingKey: 0x77, identityAddress: identity)))
            var configuration = HostConfiguration()
            configuration.bondStore = store
            configuration.privacy = PrivacySettings(mode: mode)
            let central = LEHost(transport: centralController.makeTransport(), configuration: configuration)
            let peripheral = LEHost(transport: peripheralController.makeTransport())
            try await central.powerOn()
            try await peripheral.powerOn()
            // The bonded peer advertises from its identity address although it has an IRK.
            try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                                  parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
            // A stranger advertises too: once heard, the peer had its chance.
            let strangerController = link.addController(name: "stranger", address: TestAddresses.third, position: .init(x: 0, y: 2))
            let stranger = LEHost(transport: strangerController.makeTransport())
            try await stranger.powerOn()
            try await stranger.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                                parameters: AdvertisingParameters(intervalRange: 0x0030...0x0030))
            // Both advertise every 30 ms: ten of the stranger's reports leave the peer ten chances.
            let seen = try await withTimeout("hearing the advertisers") {
                var seen: [BluetoothAddress: Int] = [:]
                for try await advertisement in try await central.scan(ScanOptions(filterDuplicates: false)) {
                    seen[advertisement.peer.address, default: 0] += 1
                    if mode == .device, seen[TestAddresses.peripheral] != nil { return seen }
                    if mode == .network, seen[TestAddresses.third, default: 0] >= 10 { return seen }
                }
                return seen
            }
            await central.stopScanning()
            if mode == .network {
                #expect(seen[TestAddresses.peripheral] == nil, "\(mode), list \(usesList): its identity address is ignored")
            } else {
                #expect(seen[TestAddresses.peripheral] != nil, "\(mode), list \(usesList): accepted at its identity address")
            }
            await central.shutdown()
            await peripheral.shutdown()
            await stranger.shutdown()
        }
    }
}
