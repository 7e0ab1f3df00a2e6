import Bluejay
import BluetoothHost
import Foundation
import Synchronization
import Testing

/// A callback-style pairing delegate, as an app writes one: types the passkey it is given.
final class TypingPairingDelegate: PairingDelegate {
    let passkey: @Sendable () async -> UInt32?
    private let finished = Mutex<[Result<LinkSecurity, BluejayError>]>([])

    init(passkey: @escaping @Sendable () async -> UInt32?) { self.passkey = passkey }

    var results: [Result<LinkSecurity, BluejayError>] { finished.withLock { $0 } }

    func passkeyRequested(for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (UInt32?) -> Void) {
        let passkey = self.passkey
        Task { reply(await passkey()) }
    }

    func pairingFinished(with peripheral: PeripheralIdentifier, result: Result<LinkSecurity, BluejayError>) {
        finished.withLock { $0.append(result) }
    }
}

extension InteropSuites.BluejayInteropTests {
    @Suite("Pairing through the Bluejay API")
    struct Pairing {
        static let service = ServiceIdentifier(uuid: "6E400301-B5A3-F393-E0A9-E50E24DCCA9E")
        static let encrypted = CharacteristicIdentifier(uuid: "6E400302-B5A3-F393-E0A9-E50E24DCCA9E", service: service)
        static let authenticated = CharacteristicIdentifier(uuid: "6E400303-B5A3-F393-E0A9-E50E24DCCA9E", service: service)

        @Test("A protected characteristic reads after automatic pairing (as on iOS); the delegate types the passkey")
        func readAfterAutomaticPairing() async throws {
            let rigBox = Mutex<BumbleRig?>(nil)
            let delegate = TypingPairingDelegate {
                guard let rig = rigBox.withLock({ $0 }) else { return nil }
                return (try? await rig.waitForEvent(named: "pairing_display"))?.int("passkey").map(UInt32.init)
            }
            try await withBluejay(arguments: ["--plugin", "bluejay_pairing"], options: { options in
                options.hostConfiguration.security = SecurityManagerSettings(ioCapability: .keyboardOnly)
            }) { rig, bluejay in
                rigBox.withLock { $0 = rig }
                bluejay.register(pairingDelegate: delegate)
                _ = try await rig.request("pairing_config", ["io": "display", "mitm": true])
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                // Refused with Insufficient Authentication, paired (Passkey Entry), read again.
                let value: ReadResult<String> = try await callback(timeout: .seconds(30)) { done in
                    bluejay.read(from: Self.authenticated) { done($0) }
                }
                #expect(value == .success("top secret"))
                #expect(bluejay.linkSecurity?.isAuthenticated == true)
                try await waitUntil("the delegate hears the result") { !delegate.results.isEmpty }
                #expect((try? delegate.results.first?.get())?.isBonded == true)
                #expect(try await bluejay.bonds().count == 1)
                #expect(try await bluejay.removeBond(try rig.peripheral().identifier()))
                #expect(try await bluejay.bonds().isEmpty)
            }
        }

        @Test("secure(authenticated: true) against a NoInputNoOutput peripheral: a typed error, never a success")
        func authenticatedAgainstJustWorks() async throws {
            try await withBluejay(arguments: ["--plugin", "bluejay_pairing"], options: { options in
                options.hostConfiguration.security = SecurityManagerSettings(ioCapability: .keyboardDisplay)
            }) { rig, bluejay in
                _ = try await rig.request("pairing_config", ["io": "none", "mitm": false])
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                await #expect(throws: BluejayError.host(.pairingFailed(.refused(reason: .authenticationRequirements, cause: .authenticationRequired)))) {
                    try await bluejay.secure(authenticated: true)
                }
                #expect(bluejay.linkSecurity?.isEncrypted == false)
                #expect(try await bluejay.bonds().isEmpty)
            }
        }

        @Test("With automatic security off, the read fails with the ATT error")
        func noAutomaticPairing() async throws {
            try await withBluejay(arguments: ["--plugin", "bluejay_pairing"], options: { $0.raisesSecurityAutomatically = false }) { rig, bluejay in
                try await connect(bluejay, to: try rig.peripheral().identifier(), rig: rig)
                let value: ReadResult<String> = try await callback { done in bluejay.read(from: Self.encrypted) { done($0) } }
                guard case let .failure(.attError(code, _, _)) = value else {
                    Issue.record("expected an ATT error, got \(value)")
                    return
                }
                // Bumble's server answers Insufficient Encryption on any unencrypted link.
                #expect(code == .insufficientEncryption)
                // Pairing on request, then the read works.
                let security = try await bluejay.pair()
                #expect(security.isEncrypted)
                let again: ReadResult<String> = try await callback { done in bluejay.read(from: Self.encrypted) { done($0) } }
                #expect(again == .success("secret"))
            }
        }
    }
}
