import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing
import TestSupport

/// `SecurityManagerSettings.maximumBonds`: any peer may pair (Just Works is accepted by
/// default), so without a bound a peer pairing under new identities would grow the bond store
/// without end. At the limit a peer with no bond pairs without bonding; a bonded peer still
/// pairs again.
@Suite("Host: the most bonds kept", .timeLimit(.minutes(1)))
struct HostBondLimitTests {
    static let centralIdentity = DeviceAddress(TestAddresses.central, type: .public)
    static let peripheralIdentity = DeviceAddress(TestAddresses.peripheral, type: .public)

    static func limited(_ maximumBonds: Int) -> SecurityManagerSettings {
        var settings = SecurityManagerSettings()
        settings.maximumBonds = maximumBonds
        return settings
    }

    /// A Just Works bond (as strong as the pairings here) between `local` and `peer`.
    static func bond(local: DeviceAddress, peer: DeviceAddress, key: UInt128) -> Bond {
        Bond(localIdentity: local, peerIdentity: peer, keySize: 16, isAuthenticated: false, isSecureConnections: true,
             peerKeys: BondKeys(longTermKey: key, identityAddress: peer), localKeys: BondKeys(longTermKey: key))
    }

    static func strangers(_ count: Int, of local: DeviceAddress) -> [Bond] {
        (0..<count).map { index in
            bond(local: local, peer: DeviceAddress(BluetoothAddress(rawValue: 0x00_1B_DC_00_00_10 + UInt64(index)), type: .public), key: UInt128(index + 1))
        }
    }

    @Test("A peripheral at its most bonds: a new central pairs, encrypted, and no bond is made on either side")
    func peripheralAtLimit() async throws {
        let pair = try await HostPair.make(peripheral: Self.limited(2))
        let kept = Self.strangers(2, of: Self.peripheralIdentity)
        for bond in kept { await pair.peripheralStore.save(bond) }
        let (connection, incoming) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && !security.isBonded)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        #expect(pair.peripheralAgent.outcomes.map(\.isBonding) == [false])
        #expect(incoming.security.isEncrypted && !incoming.security.isBonded)
        #expect(Set(await pair.peripheral.bonds()) == Set(kept), "the store holds what it held")
        #expect(await pair.central.bonds().isEmpty, "no keys were exchanged to keep")
        await pair.shutdown()
    }

    @Test("A peripheral at its most bonds: a bonded central pairs again and its bond is renewed")
    func bondedPeerAtLimit() async throws {
        let pair = try await HostPair.make(peripheral: Self.limited(2))
        let old = Self.bond(local: Self.peripheralIdentity, peer: Self.centralIdentity, key: 0xB0_0D)
        let stranger = try #require(Self.strangers(1, of: Self.peripheralIdentity).first)
        await pair.peripheralStore.save(stranger)
        await pair.peripheralStore.save(old)
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && security.isBonded)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        let bonds = await pair.peripheral.bonds()
        #expect(bonds.count == 2)
        #expect(bonds.contains(stranger))
        let renewed = try #require(bonds.first { $0.peerIdentity == Self.centralIdentity })
        #expect(renewed.peerKeys.longTermKey != old.peerKeys.longTermKey, "the new pairing's key")
        await pair.shutdown()
    }

    @Test("A central at its most bonds asks for no bonding with a new peripheral")
    func centralAtLimit() async throws {
        let pair = try await HostPair.make(central: Self.limited(1))
        let kept = Self.strangers(1, of: Self.centralIdentity)
        for bond in kept { await pair.centralStore.save(bond) }
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && !security.isBonded)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        #expect(pair.peripheralAgent.outcomes.map(\.isBonding) == [false])
        #expect(await pair.central.bonds() == kept)
        #expect(await pair.peripheral.bonds().isEmpty)
        await pair.shutdown()
    }

    /// Both Pairing Requests pass the limit's check while the store is empty (the peripheral's
    /// agent holds both numeric comparisons until it has been asked both), so the limit is met
    /// only as the keys come: the pairing that finishes second must not store its keys.
    @Test("Two new centrals pairing together for the last place: one bond is kept; the other pairing ends unbonded on this side")
    func twoNewCentralsForTheLastPlace() async throws {
        let numeric = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        var limited = numeric
        limited.maximumBonds = 1
        let gate = ComparisonGate(holding: 2)
        let board = PasskeyBoard()
        var options = TwoDevices.Options()
        options.central.security = numeric
        options.central.pairingAgent = ScriptedPairingAgent(board: board, confirms: true)
        options.peripheral.security = limited
        options.peripheral.pairingAgent = gate
        let devices = try await TwoDevices(options)
        // A second central on the same link.
        let other = try await devices.addHost(.init(name: "other central", address: TestAddresses.third, security: numeric,
                                                    pairingAgent: ScriptedPairingAgent(board: board, confirms: true)))

        let (first, _) = try await devices.connect()
        try await devices.peripheral.startAdvertising(AdvertisingData())
        let second = try await other.connect(to: await devices.peripheralAddress, timeout: .seconds(5))
        async let firstSecurity = devices.central.pair(first)
        async let secondSecurity = other.pair(second)
        let (one, two) = try await (firstSecurity, secondSecurity)
        #expect(one.isEncrypted && two.isEncrypted)
        #expect(one.isBonded && two.isBonded, "both centrals were offered bonding: both requests passed the check")
        try await waitUntil("the peripheral's two pairings finished") { gate.outcomes.count == 2 }
        #expect(gate.outcomes.map(\.isBonding).sorted { !$0 && $1 } == [false, true], "one kept, one not")
        let bonds = await devices.peripheral.bonds()
        #expect(bonds.count == 1, "the limit holds: \(bonds)")
        await other.shutdown()
        await devices.shutdown()
    }

    @Test("The limit is at least one bond")
    func atLeastOne() {
        #expect(SecurityManagerSettings(maximumBonds: 0).maximumBonds == 1)
        #expect(SecurityManagerSettings().maximumBonds == 256)
        var settings = SecurityManagerSettings()
        settings.maximumBonds = -3
        #expect(settings.maximumBonds == 1)
    }
}

/// A peripheral's user who answers numeric comparisons yes, but only once `count` of them
/// are being asked at the same time; records the pairings that finished.
final class ComparisonGate: PairingAgent {
    private struct State { var waiting: [CheckedContinuation<Void, Never>] = []; var outcomes: [PairingOutcome] = [] }
    private let state = Mutex(State())
    private let count: Int

    init(holding count: Int) { self.count = count }

    var outcomes: [PairingOutcome] { state.withLock { $0.outcomes } }

    func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
        await withCheckedContinuation { continuation in
            let released: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.waiting.append(continuation)
                guard state.waiting.count >= count else { return [] }
                defer { state.waiting = [] }
                return state.waiting
            }
            for waiter in released { waiter.resume() }
        }
        return true
    }

    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {
        if case let .success(outcome) = result { state.withLock { $0.outcomes.append(outcome) } }
    }
}
