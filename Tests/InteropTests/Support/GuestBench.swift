import Foundation
import Testing

/// What the Linux guest tests share, booted once per suite (the boot under emulation is the
/// slow part): a Bumble rig, whose controller A QEMU connects to as the guest's hci0 and
/// whose peripherals B1…BN (with the pairing plugin) are the peers, and the guest, with this
/// build's `bluejay` and `BluejayGuestApp` on its PATH. A suite gets it with the
/// ``LinuxGuestScope`` trait (`@Suite(.linuxGuest(peripherals: 4))`); its tests read
/// ``current``.
struct GuestBench: Sendable {
    let rig: BumbleRig
    let guest: LinuxGuest

    @TaskLocal static var current: GuestBench?

    /// The bench of the running suite.
    static func require() throws -> GuestBench {
        try #require(current, "no Linux guest: the suite needs the .linuxGuest trait")
    }

    /// Starts the rig, boots the guest on its controller A, runs `body`, and always powers the
    /// guest off and stops the rig (also when `body` throws).
    static func withBench<T>(peripherals: Int, rigArguments: [String], isolation: isolated (any Actor)? = #isolation,
                             _ body: (GuestBench) async throws -> T) async throws -> T {
        try await withBumbleRig(peripherals: peripherals, arguments: rigArguments) { rig in
            let app = try CLIProcess.executable().deletingLastPathComponent().appendingPathComponent("BluejayGuestApp")
            guard FileManager.default.isExecutableFile(atPath: app.path) else {
                throw RigError(message: "BluejayGuestApp is not built beside bluejay; run `swift build --build-tests`", context: "")
            }
            let (shares, environment) = try LinuxGuest.sharesRunning(try CLIProcess.executable())
            let guest = try await LinuxGuest.boot(LinuxGuest.Configuration(
                controllerPort: rig.port, shares: shares, environment: environment))
            print("Linux guest: booted to hci0 in \(seconds(guest.bootDuration))")
            let started = ContinuousClock.now
            do {
                let result = try await body(GuestBench(rig: rig, guest: guest))
                let shutdown = ContinuousClock.now
                await guest.shutdown()
                print("Linux guest: tests \(seconds(shutdown - started)), power-off \(seconds(.now - shutdown))")
                return result
            } catch {
                await guest.shutdown()
                throw error
            }
        }
    }
}

/// Boots one Linux guest and its rig around a whole suite (not around each test): the suite's
/// tests find them in ``GuestBench/current``. Pair it with `.enabled(if: LinuxGuest.shouldRun)`,
/// which skips the suite where the guest is not built, unless `BLUEJAY_GUEST_REQUIRED=1`
/// (make test) makes that a failure.
struct LinuxGuestScope: SuiteTrait, TestScoping {
    var peripherals: Int
    var rigArguments: [String]

    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await GuestBench.withBench(peripherals: peripherals, rigArguments: rigArguments) { bench in
            try await GuestBench.$current.withValue(bench) { try await function() }
        }
    }
}

extension Trait where Self == LinuxGuestScope {
    /// One Linux guest and one rig (peripherals B1…B`peripherals`, `rigArguments` for peer.py)
    /// for the whole suite.
    static func linuxGuest(peripherals: Int, rigArguments: [String] = []) -> Self {
        LinuxGuestScope(peripherals: peripherals, rigArguments: rigArguments)
    }
}

private func seconds(_ duration: Duration) -> String {
    duration.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))
}
