import Foundation
import Testing

extension InteropSuites {
    /// `bluejay pair`, `bluejay bonds`, and `read` re-encrypting with the stored bond, against a
    /// Bumble peripheral that displays a passkey.
    @Suite("bluejay pair and bonds against a Bumble peripheral")
    struct CLIPairingInteropTests {
        @Test("pair with --passkey stores a bond; read encrypts with it; bonds lists and removes it")
        func pairBondsRead() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonds-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await withBumbleRig(arguments: ["--plugin", "bluejay_pairing"]) { rig in
                _ = try await rig.request("pairing_config", ["io": "display", "mitm": true, "passkey": 123_456])
                let hci = rig.transportSpecification
                let paired = try await bluejay("pair", "--hci", hci, "--address", rig.peerAddress, "--random", "--io", "keyboard",
                                               "--passkey", "123456", "--bond-directory", directory, "--json")
                #expect(paired.status == 0, "\(paired)")
                let result = try #require(try paired.jsonObjects().first, "\(paired)")
                #expect(result["authenticated"] as? Bool == true && result["bonded"] as? Bool == true && result["keySize"] as? Int == 16)

                let listed = try await bluejay("bonds", "--bond-directory", directory, "--json")
                #expect(listed.status == 0, "\(listed)")
                let bonds = try listed.jsonObjects()
                #expect(bonds.count == 1 && bonds.first?["authenticated"] as? Bool == true, "\(listed)")

                // A new process reads the protected characteristic: the stored key encrypts the
                // link (Insufficient Authentication first, then LE Enable Encryption), no pairing.
                let read = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                             "--service", "6E400301-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--characteristic", "6E400303-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--format", "utf8", "--bond-directory", directory)
                #expect(read.status == 0, "\(read)")
                #expect(read.stdout.contains("top secret"), "\(read)")
                #expect(rig.receivedEvents.filter { $0.name == "pairing_done" }.count == 1)

                let wrong = try await bluejay("pair", "--hci", hci, "--address", rig.peerAddress, "--random", "--io", "keyboard",
                                              "--passkey", "999999", "--bond-directory", directory)
                #expect(wrong.status != 0)
                #expect(wrong.stderr.contains("Confirm Value Failed"), "\(wrong)")

                let removed = try await bluejay("bonds", "--bond-directory", directory, "--remove", rig.peerAddress, "--random")
                #expect(removed.status == 0, "\(removed)")
                let empty = try await bluejay("bonds", "--bond-directory", directory, "--json")
                #expect(empty.stdout.isEmpty, "\(empty)")
                let again = try await bluejay("bonds", "--bond-directory", directory, "--remove", rig.peerAddress, "--random")
                #expect(again.status == 69, "\(again)")
            }
        }
    
        @Test("pair --mitm against a NoInputNoOutput peripheral fails with Authentication Requirements and stores nothing")
        func pairWithMITMAgainstJustWorks() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bonds-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            try await withBumbleRig(arguments: ["--plugin", "bluejay_pairing"]) { rig in
                _ = try await rig.request("pairing_config", ["io": "none", "mitm": false])
                let paired = try await bluejay("pair", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                               "--io", "keyboard-display", "--mitm", "--bond-directory", directory)
                #expect(paired.status != 0, "\(paired)")
                #expect(paired.stderr.contains("Authentication Requirements"), "\(paired)")
                let done = try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == false }
                #expect(done.int("reason") == 0x03, "\(done)")
                let listed = try await bluejay("bonds", "--bond-directory", directory, "--json")
                #expect(listed.stdout.isEmpty, "no bond: \(listed)")
            }
        }
}
}
