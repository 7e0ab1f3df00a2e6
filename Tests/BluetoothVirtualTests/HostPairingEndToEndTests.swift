import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
import Testing

/// Our central host pairing with our peripheral host on one virtual link: every pairing method,
/// bonds and re-encryption, a peer that lost its bond, mismatched keys, a protected attribute.
@Suite("Our hosts pairing on the virtual link", .timeLimit(.minutes(1)))
struct HostPairingEndToEndTests {
    static let service: BluetoothUUID = "F00D"
    static let secret: BluetoothUUID = "F00E"
    static let authenticatedSecret: BluetoothUUID = "F00F"

    /// A bond store whose lookups, once armed, hold at a gate: the pairing that keeps its bond
    /// waits there, between its key distribution and its end.
    actor HeldLookupStore: BondStore {
        private let inner = InMemoryBondStore()
        private var armed = false
        let gate = TestGate()

        func arm() { armed = true }
        func bond(local: DeviceAddress, peer: DeviceAddress) async -> Bond? {
            if armed {
                armed = false
                try? await gate.wait()
            }
            return await inner.bond(local: local, peer: peer)
        }
        func bonds() async -> [Bond] { await inner.bonds() }
        func save(_ bond: Bond) async throws { await inner.save(bond) }
        func removeBond(local: DeviceAddress, peer: DeviceAddress) async throws -> Bool { await inner.removeBond(local: local, peer: peer) }
        func revision() async -> UInt64? { await inner.revision() }
    }

    /// Found by a loaded interop run: our central answered a Bumble peripheral's Security
    /// Request, and secure() called as Bumble reported the pairing done returned the link as
    /// encrypted but not bonded, because the central was still keeping the bond.
    @Test("secure() during a pairing's last steps waits for its end: encrypted and bonded, not the moment before")
    func secureWaitsForAPairingKeepingItsBond() async throws {
        let store = HeldLookupStore()
        var options = TwoDevices.Options()
        options.central.bondStore = store
        options.central.isFiltered = true
        let devices = try await TwoDevices(options)
        let filter = try #require(devices.centralFilter)
        let (connection, incoming) = try await devices.connect()
        // The peripheral asks for security and the central pairs. From the link's encryption on
        // the central's host hears nothing until the store is armed: the next lookup is then
        // the one that keeps the bond, after the key distribution.
        filter.holdEverything { event in
            switch event {
            case .encryptionChange, .encryptionChangeV2: return true
            default: return false
            }
        }
        let asked = Task { try await devices.peripheral.pair(incoming) }
        try await waitUntil("the link encrypted, held from the central's host") { !filter.held.isEmpty }
        await store.arm()
        filter.releaseHeld()
        try await store.gate.waitForArrivals(1)
        #expect(connection.security.isEncrypted, "the key distribution ran on an encrypted link")
        let secured = Task { try await devices.central.secure(connection, allowPairing: false) }
        try await waitUntil("secure() waiting") { await devices.central.securityWaiterCount(connection) == 1 }
        store.gate.open()
        let security = try await withTimeout { try await secured.value }
        #expect(security.isEncrypted && security.isBonded, "\(security)")
        _ = try await withTimeout { try await asked.value }
        await devices.shutdown()
    }

    @Test func secureConnectionsJustWorks() async throws {
        let pair = try await HostPair.make()
        let (connection, incoming) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && security.isSecureConnections && !security.isAuthenticated && security.keySize == 16)
        try await waitUntil("the peripheral's link encrypted") { incoming.security.isEncrypted }
        try await waitUntil("both agents heard the outcome") { pair.centralAgent.outcomes.count == 1 && pair.peripheralAgent.outcomes.count == 1 }
        #expect(pair.centralAgent.outcomes.first?.method == .justWorks)
        #expect(pair.peripheralAgent.outcomes.first?.method == .justWorks)
        await pair.shutdown()
    }

    /// Numeric Comparison and Passkey Entry need one side to ask for MITM protection; without
    /// it both sides use Just Works (Core 6.0, Vol 3, Part H, 2.3.5.1).
    @Test func numericComparisonShowsTheSameNumberOnBothSides() async throws {
        let pair = try await HostPair.make(central: .init(ioCapability: .displayYesNo, requiresMITM: true),
                                           peripheral: .init(ioCapability: .displayYesNo))
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isAuthenticated && security.isSecureConnections)
        #expect(pair.centralAgent.shown.count == 1)
        #expect(pair.centralAgent.shown == pair.peripheralAgent.shown)
        try await waitUntil("the central's agent heard the outcome") { pair.centralAgent.outcomes.count == 1 }
        #expect(pair.centralAgent.outcomes.first?.method == .numericComparison)
        await pair.shutdown()
    }

    @Test func numericComparisonRefusedByTheUserFails() async throws {
        let pair = try await HostPair.make(central: .init(ioCapability: .displayYesNo, requiresMITM: true),
                                           peripheral: .init(ioCapability: .displayYesNo), peripheralConfirms: false)
        let (connection, _) = try await pair.connect()
        await #expect(throws: HostError.pairingFailed(.peerFailed(.numericComparisonFailed))) { try await pair.central.pair(connection) }
        #expect(!connection.security.isEncrypted)
        #expect(connection.isConnected)
        await pair.shutdown()
    }

    @Test func passkeyEntryWithThePeripheralDisplaying() async throws {
        let pair = try await HostPair.make(central: .init(ioCapability: .keyboardOnly, requiresMITM: true),
                                           peripheral: .init(ioCapability: .displayOnly))
        let (connection, _) = try await pair.connect()
        let security = try await pair.central.pair(connection)
        #expect(security.isAuthenticated && security.isSecureConnections)
        #expect(pair.peripheralAgent.shown.count == 1, "the peripheral displayed the passkey the central typed")
        try await waitUntil("the central's agent heard the outcome") { pair.centralAgent.outcomes.count == 1 }
        #expect(pair.centralAgent.outcomes.first?.method == .passkeyEntry(initiatorDisplays: false, responderDisplays: true))
        await pair.shutdown()
    }

    @Test func legacyJustWorksAndLegacyPasskey() async throws {
        var legacy = SecurityManagerSettings()
        legacy.offersSecureConnections = false
        let justWorks = try await HostPair.make(central: legacy, peripheral: legacy)
        let (first, _) = try await justWorks.connect()
        let security = try await justWorks.central.pair(first)
        #expect(security.isEncrypted && !security.isSecureConnections && !security.isAuthenticated)
        await justWorks.shutdown()

        var keyboard = legacy
        keyboard.ioCapability = .keyboardOnly
        keyboard.requiresMITM = true
        var display = legacy
        display.ioCapability = .displayOnly
        let passkey = try await HostPair.make(central: keyboard, peripheral: display)
        let (second, _) = try await passkey.connect()
        let authenticated = try await passkey.central.pair(second)
        #expect(authenticated.isEncrypted && !authenticated.isSecureConnections && authenticated.isAuthenticated)
        await passkey.shutdown()
    }

    /// Bonded, the next connection encrypts with the stored keys: the peripheral answers the
    /// LTK Request from its bond store and nobody pairs again.
    @Test func bondedPeersReEncryptWithoutPairing() async throws {
        let pair = try await HostPair.make()
        let (connection, first) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        #expect(await pair.central.bonds().count == 1)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        #expect(await pair.peripheral.bonds().count == 1)
        try await pair.disconnect(connection, first)

        let (again, incoming) = try await pair.connect()
        let security = try await pair.central.secure(again, allowPairing: false)
        #expect(security.isEncrypted && security.isBonded && security.isSecureConnections)
        try await waitUntil("the peripheral's link encrypted") { incoming.security.isEncrypted }
        #expect(incoming.security.isBonded)
        #expect(pair.centralAgent.outcomes.count == 1 && pair.peripheralAgent.outcomes.count == 1, "no second pairing")
        await pair.shutdown()
    }

    /// The peripheral forgot the bond: encryption fails with PIN or Key Missing, a typed error
    /// when pairing is not allowed; allowed, the central pairs again.
    @Test func aPeripheralThatLostItsBondIsPairedAgainOnlyWhenAllowed() async throws {
        let pair = try await HostPair.make()
        let (connection, first) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        try await pair.disconnect(connection, first)
        let bond = try #require(await pair.peripheral.bonds().first)
        #expect(try await pair.peripheral.removeBond(with: bond.peerIdentity))

        let (again, _) = try await pair.connect()
        await #expect(throws: HostError.encryptionFailed(.pinOrKeyMissing)) { try await pair.central.secure(again, allowPairing: false) }
        #expect(again.isConnected && !again.security.isEncrypted)
        #expect(pair.centralAgent.outcomes.count == 1)
        let security = try await pair.central.secure(again, allowPairing: true)
        #expect(security.isEncrypted && security.isBonded)
        try await waitUntil("both paired again") { pair.centralAgent.outcomes.count == 2 && pair.peripheralAgent.outcomes.count == 2 }
        #expect(await pair.peripheral.bonds().count == 1)
        await pair.shutdown()
    }

    /// The central encrypts with a key the peripheral does not have: the controllers' MICs
    /// disagree and the link ends with MIC Failure (0x3D), which `secure` reports.
    @Test func mismatchedKeysEndTheLinkWithMICFailure() async throws {
        let pair = try await HostPair.make()
        let (connection, first) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        try await pair.disconnect(connection, first)
        var bond = try #require(await pair.central.bonds().first)
        let key = try #require(bond.peerKeys.longTermKey)
        bond.peerKeys.longTermKey = key ^ 1
        await pair.centralStore.save(bond)

        let (again, incoming) = try await pair.connect()
        await #expect(throws: HostError.disconnected(reason: .connectionTerminatedMICFailure)) {
            try await pair.central.secure(again, allowPairing: false)
        }
        #expect(try await incoming.waitForDisconnection() == .connectionTerminatedMICFailure)
        #expect(pair.centralAgent.outcomes.count == 1, "no pairing was tried")
        await pair.shutdown()
    }

    /// A characteristic that needs encryption: refused with Insufficient Authentication while
    /// the link is plain and no key exists, readable once paired. One that needs MITM
    /// protection stays refused after Just Works.
    @Test func protectedCharacteristicsNeedTheRightPairing() async throws {
        let pair = try await HostPair.make()
        _ = try await pair.peripheral.server.addService(GATTServiceDefinition(uuid: Self.service, characteristics: [
            GATTCharacteristicDefinition(uuid: Self.secret, properties: [.read], permissions: [.readable, .readEncryptionRequired],
                                         value: [0x42]),
            GATTCharacteristicDefinition(uuid: Self.authenticatedSecret, properties: [.read],
                                         permissions: [.readable, .readAuthenticationRequired], value: [0x43]),
        ]))
        let (connection, _) = try await pair.connect()
        let secret = try await connection.gatt.characteristic(Self.secret, inService: Self.service)
        let authenticated = try await connection.gatt.characteristic(Self.authenticatedSecret, inService: Self.service)
        await #expect { try await connection.gatt.read(secret) } throws: { error in
            if case let HostError.att(att) = error { att.code == .insufficientAuthentication } else { false }
        }
        _ = try await pair.central.pair(connection)
        #expect(try await connection.gatt.read(secret) == [0x42])
        await #expect { try await connection.gatt.read(authenticated) } throws: { error in
            if case let HostError.att(att) = error { att.code == .insufficientAuthentication } else { false }
        }
        await pair.shutdown()
    }
}

/// ``TwoDevices`` with its own bond store and a scripted pairing agent on each side (the two
/// agents share one passkey board).
@dynamicMemberLookup
struct HostPair {
    let devices: TwoDevices
    let centralStore: InMemoryBondStore
    let peripheralStore: InMemoryBondStore
    let centralAgent: ScriptedPairingAgent
    let peripheralAgent: ScriptedPairingAgent
    /// Between the peripheral's host and its controller.
    let peripheralFilter: FilteringTransport

    /// The devices' link and hosts: `pair.link`, `pair.central`.
    subscript<Value>(dynamicMember keyPath: KeyPath<TwoDevices, Value>) -> Value { devices[keyPath: keyPath] }

    static func make(central centralSecurity: SecurityManagerSettings = SecurityManagerSettings(),
                     peripheral peripheralSecurity: SecurityManagerSettings = SecurityManagerSettings(),
                     peripheralConfirms: Bool = true,
                     centralController centralControllerConfiguration: VirtualController.Configuration = .init(),
                     peripheralController peripheralControllerConfiguration: VirtualController.Configuration = .init()) async throws -> HostPair {
        let board = PasskeyBoard()
        let centralStore = InMemoryBondStore()
        let peripheralStore = InMemoryBondStore()
        let centralAgent = ScriptedPairingAgent(board: board, confirms: true)
        let peripheralAgent = ScriptedPairingAgent(board: board, confirms: peripheralConfirms)
        var options = TwoDevices.Options()
        options.central.controller = centralControllerConfiguration
        options.central.security = centralSecurity
        options.central.bondStore = centralStore
        options.central.pairingAgent = centralAgent
        options.peripheral.controller = peripheralControllerConfiguration
        options.peripheral.security = peripheralSecurity
        options.peripheral.bondStore = peripheralStore
        options.peripheral.pairingAgent = peripheralAgent
        options.peripheral.isFiltered = true
        let devices = try await TwoDevices(options)
        let peripheralFilter = try #require(devices.peripheralFilter)
        return HostPair(devices: devices, centralStore: centralStore, peripheralStore: peripheralStore,
                        centralAgent: centralAgent, peripheralAgent: peripheralAgent, peripheralFilter: peripheralFilter)
    }

    /// The peripheral advertises and the central connects: both ends of the new link.
    func connect() async throws -> (central: Connection, peripheral: Connection) { try await devices.connect() }

    /// Ends the link and waits until the peripheral's host saw it end.
    func disconnect(_ connection: Connection, _ incoming: Connection) async throws { try await devices.disconnect(connection, incoming) }

    func shutdown() async { await devices.shutdown() }
}

/// Where the agent that displays posts its number and the agent that types reads it.
actor PasskeyBoard {
    private var posted: UInt32?
    private var waiters: [CheckedContinuation<UInt32, Never>] = []

    func post(_ passkey: UInt32) {
        posted = passkey
        for waiter in waiters { waiter.resume(returning: passkey) }
        waiters = []
    }

    func read() async -> UInt32 {
        if let posted { return posted }
        return await withCheckedContinuation { waiters.append($0) }
    }
}

/// A user who types what the other side shows and answers numeric comparisons as scripted.
final class ScriptedPairingAgent: PairingAgent {
    let board: PasskeyBoard
    let confirms: Bool
    private let state = Mutex<(shown: [UInt32], outcomes: [PairingOutcome], failures: [PairingFailure])>(([], [], []))
    private let replacements = Mutex<(allows: Bool, asked: [BondReplacement], replaced: [BondReplacement])>((false, [], []))

    init(board: PasskeyBoard, confirms: Bool) {
        self.board = board
        self.confirms = confirms
    }

    /// The passkeys and numbers shown to this user.
    var shown: [UInt32] { state.withLock { $0.shown } }
    /// The pairings that succeeded.
    var outcomes: [PairingOutcome] { state.withLock { $0.outcomes } }
    var failures: [PairingFailure] { state.withLock { $0.failures } }
    /// Whether the user allows a weaker pairing to replace a bond; what they were asked; the
    /// bonds replaced.
    var allowsReplacement: Bool {
        get { replacements.withLock { $0.allows } }
        set { replacements.withLock { $0.allows = newValue } }
    }
    var replacementQuestions: [BondReplacement] { replacements.withLock { $0.asked } }
    var bondsReplaced: [BondReplacement] { replacements.withLock { $0.replaced } }

    func shouldReplaceBond(_ replacement: BondReplacement, for peer: DeviceAddress) async -> Bool {
        replacements.withLock { state in
            state.asked.append(replacement)
            return state.allows
        }
    }

    func bondReplaced(_ replacement: BondReplacement, for peer: DeviceAddress) async {
        replacements.withLock { $0.replaced.append(replacement) }
    }

    func display(passkey: UInt32, for peer: DeviceAddress) async {
        state.withLock { $0.shown.append(passkey) }
        await board.post(passkey)
    }

    func passkey(for peer: DeviceAddress) async -> UInt32? {
        await board.read()
    }

    func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
        state.withLock { $0.shown.append(number) }
        return confirms
    }

    private let pressed = Mutex<[SMPKeypressNotificationType]>([])
    /// The peer's Keypress Notifications this agent was told of, in order.
    var keypresses: [SMPKeypressNotificationType] { pressed.withLock { $0 } }

    func keypress(_ type: SMPKeypressNotificationType, for peer: DeviceAddress) async {
        pressed.withLock { $0.append(type) }
    }

    func pairingFinished(with peer: DeviceAddress, result: Result<PairingOutcome, PairingFailure>) async {
        state.withLock { state in
            switch result {
            case let .success(outcome): state.outcomes.append(outcome)
            case let .failure(failure): state.failures.append(failure)
            }
        }
    }
}
