import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension InteropSuites {
    /// `bluejay advertise` against `bluejay virtual`: an extended advertising set with data
    /// past 31 octets, seen whole by `bluejay scan` on another controller of the same link.
    @Suite("bluejay advertise")
    struct CLIAdvertiseTests {
        @Test("advertise --extended --filler 300 on one controller is seen whole by scan on another")
        func extendedAdvertisingFromTheCommandLine() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--listen", "tcp:127.0.0.1:0"])) { server in
                let lines = try await server.waitForReady()
                let transports = lines.filter { $0.hasPrefix("tcp:127.0.0.1:") }
                try #require(transports.count == 2, "two controllers on one link: \(lines)")
                let (transport, scanner) = (transports[0], transports[1])
                try await using(try CLIProcess(["advertise", "--hci", transport, "--extended", "--name", "Long Set", "--filler", "300",
                                                "--secondary-phy", "2m", "--seconds", "20", "--json"])) { advertiser in
                    let started = try await advertiser.waitForLine { $0.contains("\"advertising\"") }
                    #expect(started.contains("\"extended\":true"), "\(started)")
                    let scan = try await bluejay("scan", "--hci", scanner, "--duration", "15", "--find", "Long Set", "--json")
                    #expect(scan.status == 0, "\(scan)")
                    let found = try #require(try scan.jsonObjects().first { $0["name"] as? String == "Long Set" }, "\(scan)")
                    #expect(found["extended"] as? Bool == true)
                    #expect(found["secondary_phy"] as? String == "LE 2M")
                    #expect(found["truncated"] as? Bool == false)
                    // Flags 3 + name 10 + two filler structures (4 + 250, 4 + 50).
                    let data = try #require(found["advertising_data"] as? String)
                    #expect(data.count / 2 == 3 + 10 + 254 + 54, "\(data)")
                    #expect(try await advertiser.stop(signal: SIGTERM) == 0, "\(advertiser.diagnostics)")
                }
                #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.diagnostics)")
            }
        }

        @Test("advertise stopped by SIGTERM leaves the controller advertising nothing, legacy and extended, as its capture shows")
        func sigtermStopsAdvertising() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0"])) { server in
                let transport = try #require(try await server.waitForReady().first { $0.hasPrefix("tcp:127.0.0.1:") }, "\(server.diagnostics)")
                for extended in [false, true] {
                    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-adv-\(UUID().uuidString.prefix(8)).btsnoop").path
                    defer { try? FileManager.default.removeItem(atPath: path) }
                    try await using(try CLIProcess(["advertise", "--hci", transport, "--name", "Stopped", "--seconds", "60", "--json", "--capture", path]
                                                   + (extended ? ["--extended"] : []))) { advertiser in
                        _ = try await advertiser.waitForLine { $0.contains("\"advertising\"") }
                        #expect(try await advertiser.stop(signal: SIGTERM) == 0, "\(advertiser.diagnostics)")
                    }
                    let commands = try BTSnoopFile.commands(path)
                    if extended {
                        // LE Set Extended Advertising Enable (0x2039): the set on, then every set off.
                        #expect(commands.filter { $0.opcode == 0x2039 }.map { $0.parameters.first } == [1, 0], "\(commands)")
                        #expect(commands.contains { $0.opcode == 0x203D }, "LE Clear Advertising Sets: \(commands)")
                    } else {
                        // The virtual controller has extended advertising, so legacy advertising
                        // runs on a set with legacy PDUs (no legacy command, Core 6.0, Vol 4,
                        // Part E, 3.1.1): the set on, then off, then removed (0x203C).
                        #expect(!commands.contains { $0.opcode == 0x200A }, "\(commands)")
                        #expect(commands.filter { $0.opcode == 0x2039 }.map { $0.parameters.first } == [1, 0], "\(commands)")
                        #expect(commands.contains { $0.opcode == 0x203C }, "LE Remove Advertising Set: \(commands)")
                    }
                }
                #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.diagnostics)")
            }
        }

        @Test("advertise --extended --seconds 1 ends with the controller's terminated event")
        func durationEndsTheSet() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0"])) { server in
                let lines = try await server.waitForReady()
                let transport = try #require(lines.first { $0.hasPrefix("tcp:127.0.0.1:") }, "\(lines)")
                let result = try await bluejay("advertise", "--hci", transport, "--extended", "--filler", "100", "--seconds", "1", "--json")
                #expect(result.status == 0, "\(result)")
                let terminated = try #require(try result.jsonObjects().first { $0["event"] as? String == "terminated" }, "\(result)")
                #expect(terminated["reason"] as? String == "timeout")
                _ = try await server.stop(signal: SIGTERM)
            }
        }
    }
}
