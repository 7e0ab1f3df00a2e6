import BluetoothCore
@testable import BluetoothHost
import Synchronization
import Testing
import TestSupport

/// Repeated Attempts' budget across all peers (`SecurityManagerSettings.failedPairingBudget`),
/// as an attacker would meet it: a central that fails pairings on purpose, from a new address
/// each time, must not stop everyone else pairing with our peripheral. Its failed passkey
/// guesses close Passkey Entry (what the budget bounds) and nothing else.
@Suite("Host: failed pairings across peers", .timeLimit(.minutes(1)))
struct HostPairingBudgetTests {
    /// A user who types a number one off the one shown on the other device.
    final class WrongPasskeyAgent: PairingAgent {
        let board: PasskeyBoard
        init(board: PasskeyBoard) { self.board = board }
        func passkey(for peer: DeviceAddress) async -> UInt32? { (await board.read() + 1) % 1_000_000 }
    }

    /// A user who is slow to type the passkey: the pairing waits for `gate`, then types a wrong one.
    final class SlowWrongPasskeyAgent: PairingAgent {
        let board: PasskeyBoard
        let gate = TestGate()
        init(board: PasskeyBoard) { self.board = board }
        func passkey(for peer: DeviceAddress) async -> UInt32? {
            try? await gate.wait()
            return (await board.read() + 1) % 1_000_000
        }
    }

    /// Our peripheral with a budget of one failure a minute, the attacker's central (the pair's)
    /// with `attacker` as its agent, and another central with an honest user.
    struct Rig {
        let devices: TwoDevices
        let other: LEHost

        init(peripheral: SecurityManagerSettings, centrals: SecurityManagerSettings, honest: SecurityManagerSettings? = nil,
             attacker: any PairingAgent, board: PasskeyBoard) async throws {
            var budget = peripheral
            budget.failedPairingBudget = 1
            budget.failedPairingWindow = .seconds(60)
            var options = TwoDevices.Options()
            options.central.security = centrals
            options.central.pairingAgent = attacker
            options.peripheral.security = budget
            options.peripheral.pairingAgent = ScriptedPairingAgent(board: board, confirms: true)
            devices = try await TwoDevices(options)
            // A third device, the honest central, on the same link.
            other = try await devices.addHost(.init(name: "honest central", address: TestAddresses.third, security: honest ?? centrals,
                                                    pairingAgent: ScriptedPairingAgent(board: board, confirms: true)))
        }

        /// The attacker's pairing, which must fail.
        func attackerFails() async throws {
            let (link, _) = try await devices.connect()
            await #expect(throws: HostError.self) { try await devices.central.pair(link) }
        }

        /// The honest central connects and pairs.
        func honestPairing() async throws -> LinkSecurity {
            try await devices.peripheral.startAdvertising(AdvertisingData())
            let link = try await other.connect(to: await devices.peripheralAddress, timeout: .seconds(5))
            return try await other.pair(link)
        }

        func shutdown() async {
            await other.shutdown()
            await devices.shutdown()
        }
    }

    @Test func aCentralFailingNumericComparisonOnPurposeDoesNotStopAnotherPairing() async throws {
        let numeric = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        let board = PasskeyBoard()
        let rig = try await Rig(peripheral: numeric, centrals: numeric, attacker: ScriptedPairingAgent(board: board, confirms: false), board: board)
        try await rig.attackerFails()
        let security = try await rig.honestPairing()
        #expect(security.isEncrypted && security.isAuthenticated, "the failure gave no guess at a secret: it counts against its claimant only")
        await rig.shutdown()
    }

    @Test func aFailedPasskeyGuessCountsAcrossPeers() async throws {
        let display = SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true)
        let keyboard = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        let board = PasskeyBoard()
        let rig = try await Rig(peripheral: display, centrals: keyboard, attacker: WrongPasskeyAgent(board: board), board: board)
        try await rig.attackerFails()
        await #expect { try await rig.honestPairing() } throws: { error in
            guard case let HostError.pairingFailed(failure) = error else { return false }
            return failure == .peerFailed(.repeatedAttempts)
        }
        await rig.shutdown()
    }

    /// Pairings run at once on two links cannot each take the last guess of the budget: while
    /// the attacker's Passkey Entry pairing waits for its passkey, another is refused.
    @Test func aPasskeyPairingUnderWayTakesTheLastGuess() async throws {
        let display = SecurityManagerSettings(ioCapability: .displayOnly, requiresMITM: true)
        let keyboard = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        let board = PasskeyBoard()
        let attacker = SlowWrongPasskeyAgent(board: board)
        let rig = try await Rig(peripheral: display, centrals: keyboard, attacker: attacker, board: board)
        let (link, _) = try await rig.devices.connect()
        let attempt = Task { try await rig.devices.central.pair(link) }
        try await attacker.gate.waitForArrivals(1)
        await #expect { try await rig.honestPairing() } throws: { error in
            guard case let HostError.pairingFailed(failure) = error else { return false }
            return failure == .peerFailed(.repeatedAttempts)
        }
        attacker.gate.open()
        await #expect(throws: HostError.self) { try await attempt.value }
        await rig.shutdown()
    }

    @Test func failedPasskeyGuessesCloseOnlyPasskeyEntry() async throws {
        // Our peripheral can show a passkey and answer a comparison; the attacker claims a
        // keyboard and nothing else, so it forces Passkey Entry, and fails it.
        let peripheral = SecurityManagerSettings(ioCapability: .keyboardDisplay, requiresMITM: true)
        let keyboard = SecurityManagerSettings(ioCapability: .keyboardOnly, requiresMITM: true)
        let comparison = SecurityManagerSettings(ioCapability: .displayYesNo, requiresMITM: true)
        let board = PasskeyBoard()
        let rig = try await Rig(peripheral: peripheral, centrals: keyboard, honest: comparison, attacker: WrongPasskeyAgent(board: board),
                                board: board)
        try await rig.attackerFails()
        let security = try await rig.honestPairing()
        #expect(security.isEncrypted && security.isAuthenticated, "Numeric Comparison stays open while Passkey Entry is closed")
        await rig.shutdown()
    }
}
