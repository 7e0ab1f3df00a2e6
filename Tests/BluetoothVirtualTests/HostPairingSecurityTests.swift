import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
@testable import BluetoothVirtual
import Synchronization
import Testing

/// Our hosts' Security Manager against a peer that wants more than it should get, on the
/// virtual link: a device that claims a bonded peer's identity, a pairing weaker than the
/// bond, `secure(authenticated: true)` against a peer without input or output, Secure
/// Connections Only mode with a legacy bond.
@Suite("Host: pairing security promises", .timeLimit(.minutes(1)))
struct HostPairingSecurityTests {
    static let keyboard = SecurityManagerSettings(ioCapability: .keyboardOnly)
    static let display = SecurityManagerSettings(ioCapability: .displayOnly)
    /// A non-resolvable private address (top bits 00): a peer pairing from a private address
    /// is known only by the identity it distributes, so that identity is taken (a peer pairing
    /// from an identity address that names another one has it dropped, as Linux does).
    static let impostorAddress = BluetoothAddress(rawValue: 0x11_22_33_44_55_66)

    /// A bond our host keeps with `peer`, as a passkey pairing leaves it.
    static func authenticatedBond(local: BluetoothAddress, peer: BluetoothAddress) -> Bond {
        let identity = DeviceAddress(peer, type: .public)
        return Bond(localIdentity: DeviceAddress(local, type: .public), peerIdentity: identity, keySize: 16, isAuthenticated: true,
                    isSecureConnections: true, peerKeys: BondKeys(longTermKey: 0x5EC2E7, identityResolvingKey: 0x1DE7, identityAddress: identity),
                    localKeys: BondKeys(longTermKey: 0x5EC2E7))
    }

    /// A device that connects from a private address and distributes the real peripheral's
    /// identity (its controller has the same public address) pairs with Just Works: our
    /// central refuses to replace the passkey bond, drops the link, and the real peripheral
    /// still re-encrypts with the bond.
    @Test func aDeviceClaimingABondedIdentityDoesNotTakeTheBondOver() async throws {
        let pair = try await HostPair.make(central: Self.keyboard, peripheral: Self.display)
        let link = pair.link
        let recorder = await ReplacementRecorder(pair.central)
        let (first, incoming) = try await pair.connect()
        let security = try await pair.central.pair(first, authenticated: true)
        #expect(security.isAuthenticated && security.isBonded)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        try await pair.disconnect(first, incoming)
        try await pair.peripheral.stopAdvertising()
        let bond = try #require(await pair.central.bonds().first)
        #expect(bond.isAuthenticated && bond.peerIdentity == DeviceAddress(TestAddresses.peripheral, type: .public))

        // The impostor: the same public address in its controller, so the identity it
        // distributes is the bonded one; over the air a non-resolvable private address.
        let impostorController = link.addController(name: "impostor", address: TestAddresses.peripheral, position: .init(x: 0, y: 2))
        let impostor = LEHost(transport: impostorController.makeTransport())
        try await impostor.powerOn()
        try await impostor.setRandomAddress(Self.impostorAddress)
        var parameters = AdvertisingParameters()
        parameters.ownAddressType = .random
        try await impostor.startAdvertising(AdvertisingData(), parameters: parameters)
        let attack = try await pair.central.connect(to: DeviceAddress(Self.impostorAddress, type: .random), timeout: .seconds(5))
        let refused = BondReplacement(identity: bond.peerIdentity, bonded: bond.strength,
                                      proposed: KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 16),
                                      isClaimedIdentity: true)
        await #expect(throws: HostError.pairingFailed(.weakerThanBond(refused))) { try await pair.central.pair(attack) }
        #expect(pair.centralAgent.replacementQuestions == [refused], "the agent was asked, and said no (the default)")
        #expect(try await attack.waitForDisconnection() == .connectionTerminatedByLocalHost, "our central ended the link")
        #expect(await pair.central.bonds() == [bond], "the bond is as it was: same LTK, IRK and CSRK")
        #expect(pair.centralAgent.bondsReplaced.isEmpty)
        #expect(recorder.replacements.isEmpty)
        await impostor.shutdown()
        link.removeController(impostorController)

        // The real peripheral re-encrypts with the bond, no pairing.
        let (again, back) = try await pair.connect()
        let restored = try await pair.central.secure(again, allowPairing: false)
        #expect(restored.isEncrypted && restored.isBonded && restored.isAuthenticated)
        try await waitUntil("the peripheral's link encrypted") { back.security.isEncrypted }
        await pair.shutdown()
    }

    /// A bond replaced while a link encrypted with its old key is still up: that link is
    /// trusted no more, as after ``LEHost/removeBond(with:)`` (before, it kept naming the
    /// identity, and took up the new bond's GATT state with the old key).
    @Test func aLinkEncryptedWithAReplacedBondsKeyIsTrustedNoMore() async throws {
        let pair = try await HostPair.make()
        let link = pair.link
        let (first, incoming) = try await pair.connect()
        let security = try await pair.central.pair(first)
        #expect(security.isBonded)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        #expect(first.security.bondIdentity == DeviceAddress(TestAddresses.peripheral, type: .public))
        try await pair.peripheral.stopAdvertising()

        // Another device distributes the same identity with a key as strong (no consent needed):
        // the bond is replaced while the first link is up.
        let otherController = link.addController(name: "other", address: TestAddresses.peripheral, position: .init(x: 0, y: 2))
        let other = LEHost(transport: otherController.makeTransport())
        try await other.powerOn()
        try await other.setRandomAddress(Self.impostorAddress)
        var parameters = AdvertisingParameters()
        parameters.ownAddressType = .random
        try await other.startAdvertising(AdvertisingData(), parameters: parameters)
        let second = try await pair.central.connect(to: DeviceAddress(Self.impostorAddress, type: .random), timeout: .seconds(5))
        let replaced = try await pair.central.pair(second)
        #expect(replaced.isBonded)
        #expect(first.isConnected)
        #expect(first.security.isBondRemoved, "the old key stands for the identity no more")
        #expect(!second.security.isBondRemoved)
        await other.shutdown()
        _ = incoming
        await pair.shutdown()
    }

    /// The central's address names the peripheral's authenticated bond; it pairs again with
    /// Just Works. The peripheral refuses before the keys (Authentication Requirements) unless
    /// its agent allows it; allowed, the app sees the replacement.
    @Test func aWeakerPairingFromABondedAddressIsRefusedUnlessAllowed() async throws {
        let pair = try await HostPair.make(central: SecurityManagerSettings().withoutBackoff, peripheral: SecurityManagerSettings().withoutBackoff)
        let bond = Self.authenticatedBond(local: TestAddresses.peripheral, peer: TestAddresses.central)
        await pair.peripheralStore.save(bond)
        let recorder = await ReplacementRecorder(pair.peripheral)
        let (connection, _) = try await pair.connect()
        await #expect(throws: HostError.pairingFailed(.peerFailed(.authenticationRequirements))) { try await pair.central.pair(connection) }
        let replacement = BondReplacement(identity: bond.peerIdentity, bonded: bond.strength,
                                          proposed: KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 16),
                                          isClaimedIdentity: false)
        try await waitUntil("the peripheral's agent heard the failure") { !pair.peripheralAgent.failures.isEmpty }
        #expect(pair.peripheralAgent.replacementQuestions == [replacement])
        #expect(pair.peripheralAgent.failures == [.refused(reason: .authenticationRequirements, cause: .weakerThanBond(replacement))])
        #expect(await pair.peripheral.bonds() == [bond])
        #expect(!connection.security.isEncrypted)

        // The user says "pair again": the bond is replaced, and the app hears of it.
        pair.peripheralAgent.allowsReplacement = true
        let security = try await pair.central.pair(connection)
        #expect(security.isEncrypted && !security.isAuthenticated)
        try await waitUntil("the peripheral's agent heard the replacement") { !pair.peripheralAgent.bondsReplaced.isEmpty }
        #expect(pair.peripheralAgent.bondsReplaced == [replacement])
        try await waitUntil("the host event") { !recorder.replacements.isEmpty }
        #expect(recorder.replacements == [replacement])
        #expect(await pair.peripheral.bonds().first?.isAuthenticated == false)
        await pair.shutdown()
    }

    /// The central refuses too, before its public key: a bond with the peripheral's address
    /// that is stronger than what the IO capabilities allow now.
    @Test func theCentralRefusesAWeakerPairingBeforeTheKeys() async throws {
        let pair = try await HostPair.make()
        let bond = Self.authenticatedBond(local: TestAddresses.central, peer: TestAddresses.peripheral)
        await pair.centralStore.save(bond)
        let (connection, _) = try await pair.connect()
        await #expect { try await pair.central.pair(connection) } throws: { error in
            guard case let HostError.pairingFailed(.refused(reason, .weakerThanBond(replacement))) = error else { return false }
            return reason == .authenticationRequirements && !replacement.isClaimedIdentity && replacement.isWeaker
        }
        #expect(await pair.central.bonds() == [bond])
        await pair.shutdown()
    }

    /// `secure(authenticated: true)` and `pair(authenticated: true)` against a peripheral
    /// without input or output: MITM in the Pairing Request, a typed error, never `.success`,
    /// and the Just Works bond already there stays as it was.
    @Test func authenticationAskedForAgainstNoInputNoOutputIsATypedError() async throws {
        let pair = try await HostPair.make(central: SecurityManagerSettings(ioCapability: .keyboardDisplay).withoutBackoff,
                                           peripheral: SecurityManagerSettings().withoutBackoff)
        let (connection, _) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        let bond = try #require(await pair.central.bonds().first)
        #expect(!bond.isAuthenticated)
        let expected = HostError.pairingFailed(.refused(reason: .authenticationRequirements, cause: .authenticationRequired))
        await #expect(throws: expected) { try await pair.central.secure(connection, authenticated: true) }
        await #expect(throws: expected) { try await pair.central.pair(connection, authenticated: true) }
        // The keys stay as they were (the central's own GATT server keeps its bonded client's
        // state with the bond since the link was encrypted: Bond.clientState, no replacement).
        #expect(await pair.central.bonds().map(\.pairingRecord) == [bond.pairingRecord])
        #expect(!connection.security.isAuthenticated)
        await pair.shutdown()
    }

    /// Our peripheral asks for MITM protection (a Security Request with MITM). The central's
    /// Just Works bond is not enough, so it pairs again, with Just Works: our peripheral
    /// refuses that pairing, and `secure(authenticated: true)` throws; the bond stays.
    @Test func aPeripheralAskingForAuthenticationRefusesJustWorks() async throws {
        let pair = try await HostPair.make(central: SecurityManagerSettings().withoutBackoff, peripheral: SecurityManagerSettings().withoutBackoff)
        let (connection, incoming) = try await pair.connect()
        _ = try await pair.central.pair(connection)
        try await waitUntil("the peripheral's pairing finished") { pair.peripheralAgent.outcomes.count == 1 }
        let bonds = await pair.peripheral.bonds()
        try await pair.disconnect(connection, incoming)
        let (_, again) = try await pair.connect()
        await #expect(throws: HostError.pairingFailed(.refused(reason: .authenticationRequirements, cause: .authenticationRequired))) {
            try await pair.peripheral.secure(again, authenticated: true)
        }
        #expect(!again.security.isAuthenticated)
        // The keys stay as they were; the first link's robust-caching state was stored with the
        // bond when it ended (Bond.clientState), which is no replacement.
        #expect(await pair.peripheral.bonds().map(\.pairingRecord) == bonds.map(\.pairingRecord))
        await pair.shutdown()
    }

    /// Secure Connections Only: a legacy bond never encrypts. The central pairs instead; our
    /// peripheral refuses the LTK Request of a legacy bond (PIN or Key Missing).
    @Test func secureConnectionsOnlyNeverEncryptsWithALegacyBond() async throws {
        var scOnly = SecurityManagerSettings(ioCapability: .displayYesNo)
        scOnly.secureConnectionsOnly = true
        let pair = try await HostPair.make(central: scOnly, peripheral: scOnly)
        var legacyBond = Self.authenticatedBond(local: TestAddresses.central, peer: TestAddresses.peripheral)
        legacyBond.isSecureConnections = false
        await pair.centralStore.save(legacyBond)
        var peripheralSide = Self.authenticatedBond(local: TestAddresses.peripheral, peer: TestAddresses.central)
        peripheralSide.isSecureConnections = false
        await pair.peripheralStore.save(peripheralSide)
        let (connection, _) = try await pair.connect()
        // The central does not use the legacy bond: with pairing refused it says so at once.
        await #expect(throws: HostError.pairingFailed(.authenticationRequired)) { try await pair.central.secure(connection, allowPairing: false) }
        // Encrypting with the legacy key anyway (as a central without the mode would): our
        // peripheral answers the LTK Request negatively, and the central hears PIN or Key Missing.
        await pair.central.encrypt(with: legacyBond, key: 0x5EC2E7, allowPairing: false, on: connection)
        await #expect(throws: HostError.encryptionFailed(.pinOrKeyMissing)) { try await pair.central.waitForSecurity(connection) }
        #expect(!connection.security.isEncrypted)
        await pair.shutdown()
    }
}

/// Collects the ``HostEvent/bondReplaced(_:_:)`` events of a host from now on.
final class ReplacementRecorder: Sendable {
    private final class Log: Sendable {
        let found = Mutex<[BondReplacement]>([])
    }

    private let log = Log()
    private let task: Task<Void, Never>

    init(_ host: LEHost) async {
        let events = await host.events()
        let log = log
        task = Task {
            for await event in events {
                if case let .bondReplaced(_, replacement) = event { log.found.withLock { $0.append(replacement) } }
            }
        }
    }

    var replacements: [BondReplacement] { log.found.withLock { $0 } }

    deinit { task.cancel() }
}

private extension Bond {
    /// The bond as its pairing made it: keys, identities and strength, without what the GATT
    /// server keeps of the peer between connections.
    var pairingRecord: Bond {
        var record = self
        record.clientState = nil
        return record
    }
}
