import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Foundation
import Testing

/// Our host on a virtual controller without a public address (Read BD_ADDR answers
/// 00:00:00:00:00:00, as Zephyr's `hci_uart` on an nRF52840): a static random identity, set
/// with LE Set Random Address, used over the air and distributed when pairing.
@Suite("A static random identity on a controller without a public address", .timeLimit(.minutes(1)))
struct StaticIdentityTests {
    static let noPublicAddress: VirtualController.Configuration = {
        var configuration = VirtualController.Configuration()
        configuration.hasPublicAddress = false
        return configuration
    }()

    static func zephyr(_ address: BluetoothAddress) -> VirtualController.Configuration {
        var configuration = noPublicAddress
        configuration.zephyrStaticAddress = address
        return configuration
    }

    @Test func theVirtualControllerWithoutAPublicAddressAnswersZeros() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "nrf", address: TestAddresses.central, configuration: Self.noPublicAddress)
        let hci = HCIController(transport: controller.makeTransport())
        hci.start()
        defer { hci.close() }
        #expect(try await hci.send(ReadBDADDRCommand()).address == .zero)
        // Not Zephyr's: its vendor commands are unknown.
        await #expect(throws: HCIError.commandFailed(ZephyrReadVersionInformationCommand.opcode, .unknownCommand)) {
            try await hci.send(ZephyrReadVersionInformationCommand())
        }
    }

    @Test func aGeneratedStaticAddressIsTheIdentityAndTheControllersRandomAddress() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "nrf", address: TestAddresses.central, configuration: Self.noPublicAddress)
        let host = LEHost(transport: controller.makeTransport())
        let info = try await host.powerOn()
        #expect(!info.hasPublicAddress && info.staticAddress == nil)
        #expect(info.adaptations.first == .noPublicAddress)
        let identity = try #require(await host.identity)
        #expect(identity.source == .generatedStaticAddress(isNew: true, isKept: false))
        #expect(identity.address.type == .random && identity.address.address.isStaticRandom)
        #expect(await host.identityAddress == identity.address)
        #expect(controller.randomAddress == identity.address.address)
        await host.shutdown()
    }

    @Test func aControllerWithAPublicAddressKeepsIt() async throws {
        let link = VirtualLink()
        let controller = link.addController(name: "public", address: TestAddresses.central)
        let host = LEHost(transport: controller.makeTransport())
        _ = try await host.powerOn()
        #expect(await host.identity == LocalIdentity(address: DeviceAddress(TestAddresses.central, type: .public), source: .publicAddress))
        #expect(controller.randomAddress == nil)
        await host.shutdown()
    }

    @Test func zephyrsStaticAddressIsTheIdentity() async throws {
        let link = VirtualLink()
        let own = BluetoothAddress("C4:5A:7E:11:22:33")!
        let controller = link.addController(name: "zephyr", address: TestAddresses.central, configuration: Self.zephyr(own))
        let host = LEHost(transport: controller.makeTransport())
        let info = try await host.powerOn()
        #expect(info.staticAddress == own)
        #expect(await host.identity == LocalIdentity(address: DeviceAddress(own, type: .random), source: .controllerStaticAddress))
        #expect(controller.randomAddress == own)
        await host.shutdown()
    }

    @Test func zephyrReportingAnAddressThatIsNotStaticIsIgnored() async throws {
        let link = VirtualLink()
        // Top bits 01: a resolvable private address, not a static one.
        let controller = link.addController(name: "zephyr", address: TestAddresses.central,
                                            configuration: Self.zephyr(BluetoothAddress("44:5A:7E:11:22:33")!))
        let host = LEHost(transport: controller.makeTransport())
        let info = try await host.powerOn()
        #expect(info.staticAddress == nil)
        #expect(await host.identity?.isGenerated == true)
        await host.shutdown()
    }

    @Test func theGeneratedAddressIsKeptPerAdapterAcrossHosts() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-static-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var configuration = HostConfiguration()
        configuration.bondStore = FileBondStore(directory: directory, logger: .init(label: "test"))
        let link = VirtualLink()
        let first = link.addController(name: "one", address: TestAddresses.central, configuration: Self.noPublicAddress)
        let second = link.addController(name: "two", address: TestAddresses.peripheral, configuration: Self.noPublicAddress)

        let host = LEHost(transport: first.makeTransport(), configuration: configuration)
        _ = try await host.powerOn()
        let made = try #require(await host.identity)
        #expect(made.source == .generatedStaticAddress(isNew: true, isKept: true))
        await host.shutdown()

        let again = LEHost(transport: first.makeTransport(), configuration: configuration)
        _ = try await again.powerOn()
        #expect(await again.identity == LocalIdentity(address: made.address, source: .generatedStaticAddress(isNew: false, isKept: true)))
        await again.shutdown()

        // Another adapter gets an address of its own.
        let other = LEHost(transport: second.makeTransport(), configuration: configuration)
        _ = try await other.powerOn()
        let otherIdentity = try #require(await other.identity)
        #expect(otherIdentity.address != made.address && otherIdentity.address.address.isStaticRandom)
        await other.shutdown()
    }

    /// A kept address that cannot be read now (out of file descriptors) is neither set aside
    /// nor replaced: every bond was made under it. The host uses a new address for that run only.
    @Test func aKeptAddressThatCannotBeReadNowIsKept() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-static-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let kept = try #require(BluetoothAddress("C4:5A:7E:11:22:33"))
        try await FileStaticAddressStore(directory: directory, logger: .init(label: "test")).save(kept, forAdapter: "hci0")
        let before = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(FileStaticAddressStore.fileName))
        let failing = FileStaticAddressStore(directory: directory, logger: .init(label: "test"), open: { _, _ in
            errno = EMFILE
            return -1
        })
        await #expect(throws: BondStoreError.self) { try await failing.address(forAdapter: "hci0") }
        await #expect(throws: BondStoreError.self) { try await failing.save(try #require(BluetoothAddress("C4:00:00:00:00:01")), forAdapter: "hci1") }
        let after = try Data(contentsOf: URL(fileURLWithPath: directory).appendingPathComponent(FileStaticAddressStore.fileName))
        #expect(after == before, "the file is as it was")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [FileStaticAddressStore.fileName], "nothing set aside")
    }

    @Test func aFileThatIsNotStaticAddressesIsSetAsideAndANewAddressMade() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-static-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = FileStaticAddressStore(directory: directory, logger: .init(label: "test"))
        try await store.save(BluetoothAddress("C4:5A:7E:11:22:33")!, forAdapter: "hci0")
        // Someone writes a public-looking address into the file.
        let path = store.path
        let tampered = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "C4:5A:7E:11:22:33", with: "00:11:22:33:44:55")
        try tampered.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try await store.address(forAdapter: "hci0") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix(FileStaticAddressStore.fileName + ".corrupt-") }
        #expect(aside.count == 1)
        await #expect(throws: BondStoreError.self) { try await store.save(BluetoothAddress("00:11:22:33:44:55")!, forAdapter: "hci0") }
    }

    @Test func anExtendedAdvertisingSetAdvertisesFromTheStaticIdentity() async throws {
        var options = TwoDevices.Options()
        options.central = .init(name: "scanner", address: TestAddresses.central, position: .init(x: 2, y: 0))
        options.peripheral = .init(name: "nrf", address: TestAddresses.peripheral, controller: Self.noPublicAddress)
        let devices = try await TwoDevices(options)
        let advertiser = devices.peripheral
        let scanner = devices.central
        let identity = try #require(await advertiser.identityAddress)
        // A set asking for the public address gets the static one (the set's random address).
        _ = try await advertiser.startAdvertisingSet(AdvertisingData([.completeLocalName("Set")]),
                                                     parameters: ExtendedAdvertisingParameters(isConnectable: true))
        let heard = try await withTimeout("hearing the set") {
            for try await advertisement in try await scanner.scan() where advertisement.localName == "Set" { return advertisement }
            throw TestTimeout(description: "the scan ended")
        }
        #expect(heard.peer == identity && heard.isExtended)
        // A central reaches it at the identity address.
        let connection = try await scanner.connect(to: identity, timeout: .seconds(5))
        #expect(connection.peer == identity)
        try await connection.disconnect()
        await scanner.shutdown()
        await advertiser.shutdown()
    }

    @Test func twoHostsWithoutPublicAddressesPairAndBondUnderTheirStaticIdentities() async throws {
        let pair = try await HostPair.make(centralController: Self.noPublicAddress, peripheralController: Self.noPublicAddress)
        let centralIdentity = try #require(await pair.central.identityAddress)
        let peripheralIdentity = try #require(await pair.peripheral.identityAddress)
        let (connection, incoming) = try await pair.connect()
        // Over the air both ends use their static addresses, as random ones.
        #expect(connection.local == centralIdentity && connection.peer == peripheralIdentity)
        #expect(incoming.peer == centralIdentity && incoming.local == peripheralIdentity)
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && security.isSecureConnections && security.isBonded)
        try await waitUntil("both sides bonded") { pair.centralAgent.outcomes.count == 1 && pair.peripheralAgent.outcomes.count == 1 }
        let centralBonds = await pair.centralStore.bonds()
        let peripheralBonds = await pair.peripheralStore.bonds()
        #expect(centralBonds.map(\.localIdentity) == [centralIdentity] && centralBonds.map(\.peerIdentity) == [peripheralIdentity])
        #expect(peripheralBonds.map(\.localIdentity) == [peripheralIdentity] && peripheralBonds.map(\.peerIdentity) == [centralIdentity])
        // The identity distributed in Identity Address Information is the static address.
        #expect(centralBonds.first?.peerKeys.identityAddress == peripheralIdentity)
        #expect(peripheralBonds.first?.peerKeys.identityAddress == centralIdentity)
        await pair.shutdown()
    }
}
