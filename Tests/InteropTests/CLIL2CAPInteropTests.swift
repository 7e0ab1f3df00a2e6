import Foundation
import Testing

extension InteropSuites {
    /// `bluejay l2cap` against Bumble's echo server (rig plugin bluejay_l2cap): stdin goes out
    /// as SDUs, the echo comes back on stdout, and the command exits 0 after the idle time.
    @Suite("bluejay l2cap against a Bumble echo server")
    struct CLIL2CAPInteropTests {
        @Test("stdin through the channel and back on stdout, byte-exact; a refused PSM fails with the reason")
        func echo() async throws {
            try await withBumbleRig(arguments: ["--plugin", "bluejay_l2cap"]) { rig in
                _ = try await rig.request("l2cap_server", ["psm": 0x81, "mode": "echo", "mtu": 256, "mps": 64, "max_credits": 4])
                let text = (0..<2_000).map { "line \($0): the quick brown fox jumps over the lazy dog\n" }.joined()
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-l2cap-\(UUID().uuidString).txt")
                try Data(text.utf8).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let result = try await bluejay(["l2cap", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                                "--psm", "0x81", "--sdu", "100", "--idle", "1"], input: .file(file), timeout: .seconds(90))
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout == text, "\(result.stdout.count) of \(text.count) bytes back")
                #expect(result.stderr.contains("peer MTU 256"), "\(result.stderr)")
                let stats = try await rig.request("l2cap_stats")
                #expect(stats.int("received") == text.utf8.count, "\(stats)")

                let refused = try await bluejay(["l2cap", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                                 "--psm", "0x99"], timeout: .seconds(30))
                #expect(refused.status == 69, "\(refused)")
                #expect(refused.stderr.contains("SPSM not supported"), "\(refused)")
            }
        }

        @Test("--listen serves one channel as a peripheral: stdin to the Bumble central, its text to stdout")
        func listen() async throws {
            try await using(try BumbleRig.start(script: .central, arguments: ["--plugin", "bluejay_l2cap"])) { central in
                try await central.waitForReady()
                let text = (0..<300).map { "from bluejay \($0)\n" }.joined()
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-l2cap-\(UUID().uuidString).txt")
                try Data(text.utf8).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let process = try CLIProcess(["l2cap", "--hci", central.transportSpecification, "--listen", "--psm", "0x80", "--idle", "3"],
                                             input: .file(file))
                // Bumble's connect waits for the advertising the command starts.
                _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public", "discover": false,
                                                          "timeout_s": 20])
                let opened = try await central.request("l2cap_connect", ["psm": 0x80, "mode": "sink"])
                #expect(opened.bool("opened") == true, "\(opened)\n\(process.diagnostics)")
                _ = try await central.request("l2cap_send", ["text": "hello from bumble\n"])
                let result = try await process.finish(timeout: .seconds(30))
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout == "hello from bumble\n", "\(result)")
                try await waitUntil("Bumble got our stdin") {
                    (try? await central.request("l2cap_stats").int("received")) == text.utf8.count
                }
            }
        }
    }
}
