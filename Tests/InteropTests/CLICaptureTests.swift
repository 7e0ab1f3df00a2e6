import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension InteropSuites {
    /// `--capture FILE`: the btsnoop file of a CLI run, opened by the real tool, `tshark`
    /// (Debian's package; scripts/test.sh installs it when missing), which must decode the
    /// whole session down to ATT. Also `bluejay adapters` and `bluejay --version`.
    @Suite("bluejay --capture, adapters, --version")
    struct CLICaptureTests {
        /// `tshark` on the PATH (or in /usr/bin), or `nil`.
        static let tshark: String? = {
            let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/usr/bin", "/usr/sbin"]
            return directories.map { "\($0)/tshark" }.first { FileManager.default.isExecutableFile(atPath: $0) }
        }()

        private static func temporaryPath(_ name: String) -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-capture-\(UUID().uuidString.prefix(8))-\(name)").path
        }

        /// Runs tshark to the end; its stdout lines.
        private static func runTShark(_ tshark: String, _ arguments: [String]) async throws -> (status: Int32, lines: [String], log: String) {
            let process = try ManagedProcess.launch(name: "tshark", executable: URL(fileURLWithPath: tshark), arguments: arguments,
                                                    input: .nullDevice, stopping: .interrupt, logName: "tshark", parse: { $0 })
            let status = try await process.exitStatus(within: .seconds(60))
            defer { process.stop() }
            return (status ?? -1, process.lines, process.log)
        }

        @Test("demo --capture writes a btsnoop file that tshark decodes: scan, connect, discovery, reads, notifications, disconnect",
              .enabled(if: tshark != nil, "tshark is not installed (scripts/test.sh installs Debian's tshark package; apt-get install tshark)"))
        func demoCaptureDecodesInTShark() async throws {
            let tshark = try #require(Self.tshark)
            let path = Self.temporaryPath("demo.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: path) }
            let demo = try await bluejay("demo", "--seconds", "1.5", "--capture", path, timeout: .seconds(60))
            #expect(demo.status == 0, "\(demo)")

            let decoded = try await Self.runTShark(tshark, ["-r", path, "-V"])
            #expect(decoded.status == 0, "tshark failed: \(decoded.log)")
            let text = decoded.lines.joined(separator: "\n")
            #expect(!text.contains("Malformed"), "tshark found malformed packets")
            // The HCI side: the controller's setup, the scan, the connection, its end.
            for expected in ["Command Opcode: Reset (0x0c03)", "LE Extended Advertising Report", "LE Enhanced Connection Complete",
                             "Command Opcode: Disconnect (0x0406)", "Disconnect Complete"] {
                #expect(text.contains(expected), "tshark did not show \(expected)")
            }
            // ATT, as the demo runs it: MTU, discovery, reads and writes, notifications.
            for opcode in ["Exchange MTU Request (0x02)", "Find By Type Value Request (0x06)", "Read By Type Request (0x08)",
                           "Read By Type Response (0x09)", "Read Request (0x0a)", "Read Response (0x0b)", "Write Request (0x12)",
                           "Handle Value Notification (0x1b)"] {
                #expect(text.contains("Opcode: \(opcode)"), "tshark did not show the ATT opcode \(opcode)")
            }
            // The handles: those discovery found are those read and notified.
            let measurement = try #require(Self.valueHandle(of: "Heart Rate Measurement", in: text), "no Heart Rate Measurement declaration")
            let location = try #require(Self.valueHandle(of: "Body Sensor Location", in: text), "no Body Sensor Location declaration")
            let notified = Self.handles(after: "Opcode: Handle Value Notification (0x1b)", in: decoded.lines)
            #expect(notified.count >= 2, "notifications every 250 ms for 1.5 s")
            #expect(Set(notified) == [measurement], "notified handles \(notified), Heart Rate Measurement is \(measurement)")
            #expect(Self.handles(after: "Opcode: Read Request (0x0a)", in: decoded.lines).contains(location))
        }

        /// The key-bearing fields as Wireshark names them: SMP's confirm, random, LTK, IRK and
        /// CSRK values, and the Long_Term_Key of LE Enable Encryption.
        static let keyFields = ["btsmp.cfm_value", "btsmp.random_value", "btsmp.long_term_key", "btsmp.id_resolving_key",
                                "btsmp.signature_key", "bthci_cmd.le_long_term_key"]

        /// Every value tshark decodes for each of `fields` in `path` (hex, no separators).
        private static func fieldValues(_ tshark: String, _ path: String, _ fields: [String]) async throws -> [String: [String]] {
            let decoded = try await runTShark(tshark, ["-r", path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=a", "-E", "aggregator=,",
                                                       "-Y", fields.joined(separator: " || ")] + fields.flatMap { ["-e", $0] })
            #expect(decoded.status == 0, "tshark failed: \(decoded.log)")
            var values: [String: [String]] = [:]
            for line in decoded.lines {
                for (field, column) in zip(fields, line.split(separator: "|", omittingEmptySubsequences: false)) where !column.isEmpty {
                    values[field, default: []] += column.split(separator: ",").map { $0.replacingOccurrences(of: ":", with: "") }
                }
            }
            return values
        }

        private static func mode(_ path: String) -> mode_t? {
            var status = stat()
            guard lstat(path, &status) == 0 else { return nil }
            return status.st_mode & 0o777
        }

        @Test("pair --capture: the file is 0600 and tshark decodes every key-bearing packet of a legacy passkey pairing with its key all zeros; read --capture-keys keeps the bond's LTK for Wireshark",
              .enabled(if: tshark != nil, "tshark is not installed (scripts/test.sh installs Debian's tshark package; apt-get install tshark)"))
        func pairingCaptureBlanksKeysUnlessKept() async throws {
            let tshark = try #require(Self.tshark)
            let legacyBonds = Self.temporaryPath("legacy-bonds")
            let bonds = Self.temporaryPath("bonds")
            let blanked = Self.temporaryPath("pair.btsnoop")
            let kept = Self.temporaryPath("kept.btsnoop")
            defer { [legacyBonds, bonds, blanked, kept].forEach { try? FileManager.default.removeItem(atPath: $0) } }
            try await withBumbleRig(arguments: ["--plugin", "bluejay_pairing"]) { rig in
                let hci = rig.transportSpecification
                // Legacy pairing: confirm and random values, the STK, then every key distributed both ways.
                _ = try await rig.request("pairing_config", ["io": "display", "mitm": true, "passkey": 123_456, "sc": false])
                let paired = try await bluejay("pair", "--hci", hci, "--address", rig.peerAddress, "--random", "--io", "keyboard",
                                               "--passkey", "123456", "--bond-directory", legacyBonds, "--capture", blanked)
                #expect(paired.status == 0, "\(paired)")
                // An LE Secure Connections bond, which a new process encrypts with (Bumble 0.0.236, as a
                // peripheral, answers a legacy bond's encryption with the LTK the central distributed,
                // not its own: a MIC failure, whoever the central is).
                _ = try await rig.request("forget_keys")
                _ = try await rig.request("pairing_config", ["io": "display", "mitm": true, "passkey": 123_456, "sc": true])
                let securePaired = try await bluejay("pair", "--hci", hci, "--address", rig.peerAddress, "--random", "--io", "keyboard",
                                                     "--passkey", "123456", "--bond-directory", bonds)
                #expect(securePaired.status == 0, "\(securePaired)")
                let read = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                             "--service", "6E400301-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--characteristic", "6E400303-B5A3-F393-E0A9-E50E24DCCA9E",
                                             "--format", "utf8", "--bond-directory", bonds, "--capture", kept, "--capture-keys")
                #expect(read.status == 0, "\(read)")
                #expect(read.stdout.contains("top secret"), "\(read)")
            }
            #expect(Self.mode(blanked) == 0o600)
            #expect(Self.mode(kept) == 0o600)

            // tshark decodes the blanked packets (Bumble's controller answers LE Set Data Length
            // with a short Command Complete, which tshark calls malformed: not ours to check).
            let malformed = try await Self.runTShark(tshark, ["-r", blanked, "-Y", "_ws.malformed && (btsmp || bthci_cmd.le_long_term_key)"])
            #expect(malformed.status == 0 && malformed.lines.isEmpty, "\(malformed.lines) \(malformed.log)")
            let values = try await Self.fieldValues(tshark, blanked, Self.keyFields)
            for field in Self.keyFields {
                // Wireshark calls Central Identification's Rand a random value too: 8 octets, no secret.
                let found = (values[field] ?? []).filter { $0.count == 32 }
                #expect(!found.isEmpty, "\(field) decoded in the pairing's capture")
                #expect(found.allSatisfy { $0 == String(repeating: "0", count: 32) }, "\(field): \(found)")
            }

            // The bond's LTK (most significant octet first in the file) is what LE Enable
            // Encryption carried (least significant first) in the capture that keeps keys.
            let bondFile = try #require(try FileManager.default.contentsOfDirectory(atPath: bonds).first { $0.hasSuffix(".json") })
            let record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: bonds + "/" + bondFile))) as? [String: Any])
            let bond = try #require(record["bond"] as? [String: Any])
            let ltk = try #require((bond["peerKeys"] as? [String: Any])?["longTermKey"] as? String)
            let reversed = stride(from: ltk.count - 2, through: 0, by: -2).map { ltk.dropFirst($0).prefix(2) }.joined()
            let keptKeys = try await Self.fieldValues(tshark, kept, ["bthci_cmd.le_long_term_key"])["bthci_cmd.le_long_term_key"] ?? []
            #expect(!keptKeys.isEmpty && keptKeys.allSatisfy { $0 == reversed.lowercased() }, "\(keptKeys), the bond's LTK \(ltk)")
        }

        /// `Characteristic Handle: 0x000c, UUID: NAME` in a Read By Type Response: the value handle.
        private static func valueHandle(of name: String, in text: String) -> String? {
            guard let range = text.range(of: ", UUID: \(name)\n") else { return nil }
            let before = text[..<range.lowerBound]
            guard let marker = before.range(of: "Characteristic Handle: ", options: .backwards) else { return nil }
            return String(before[marker.upperBound...])
        }

        /// The `Handle: 0x....` lines right after each line containing `marker`.
        private static func handles(after marker: String, in lines: [String]) -> [String] {
            lines.indices.compactMap { index -> String? in
                guard lines[index].contains(marker) else { return nil }
                let next = lines[(index + 1)...].first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("Handle: 0x") }
                return next.map { String($0.trimmingCharacters(in: .whitespaces).dropFirst("Handle: ".count).prefix(6)) }
            }
        }

        @Test("an existing capture file is refused with a clear message, appended to or replaced only when asked")
        func existingFile() async throws {
            let path = Self.temporaryPath("existing.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try Data("precious".utf8).write(to: URL(fileURLWithPath: path))
            let refused = try await bluejay("demo", "--seconds", "0", "--capture", path, timeout: .seconds(60))
            #expect(refused.status == 73, "\(refused)")
            #expect(refused.stderr.contains("already exists: pass --capture-append to add to it or --capture-overwrite to replace it"), "\(refused)")
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "precious")

            let notACapture = try await bluejay("demo", "--seconds", "0", "--capture", path, "--capture-append", timeout: .seconds(60))
            #expect(notACapture.status == 73, "\(notACapture)")
            #expect(notACapture.stderr.contains("not a btsnoop file"), "\(notACapture)")

            let replaced = try await bluejay("demo", "--seconds", "0", "--capture", path, "--capture-overwrite", timeout: .seconds(60))
            #expect(replaced.status == 0, "\(replaced)")
            let size = try Data(contentsOf: URL(fileURLWithPath: path)).count
            let appended = try await bluejay("demo", "--seconds", "0", "--capture", path, "--capture-append", timeout: .seconds(60))
            #expect(appended.status == 0, "\(appended)")
            let header = Array(try Data(contentsOf: URL(fileURLWithPath: path)).prefix(8))
            #expect(header == Array("btsnoop".utf8) + [0])
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count > size + 16, "the second run's records follow the first's")
        }

        @Test("virtual --capture writes one file per served controller, -1 and -2 before the extension")
        func virtualCapturePerController() async throws {
            let path = Self.temporaryPath("virtual.btsnoop")
            let first = path.replacingOccurrences(of: ".btsnoop", with: "-1.btsnoop")
            let second = path.replacingOccurrences(of: ".btsnoop", with: "-2.btsnoop")
            defer { [first, second].forEach { try? FileManager.default.removeItem(atPath: $0) } }
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--listen", "tcp:127.0.0.1:0", "--sensor",
                                            "--capture", path])) { server in
                let transports = try await server.waitForReady().filter { $0.hasPrefix("tcp:") }
                try #require(transports.count == 2, "\(server.diagnostics)")
                let scan = try await bluejay("scan", "--hci", transports[0], "--duration", "30", "--find", "Bluejay HRM", "--json")
                #expect(scan.status == 0, "\(scan)")
                #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.diagnostics)")
            }
            let records = try BTSnoopFile.records(first)
            // The client host's view: commands sent (flags 2), events received (flags 3).
            #expect(records.contains { $0.flags == 2 && $0.data.first == 0x01 }, "no command recorded")
            #expect(records.contains { $0.flags == 3 && $0.data.first == 0x04 }, "no event recorded")
            #expect(try BTSnoopFile.records(second).isEmpty, "nobody used the second controller")
        }

        @Test("gatt through bluejay virtual --capture: the served controller's file decodes in tshark, services by Read By Group Type",
              .enabled(if: tshark != nil, "tshark is not installed (scripts/test.sh installs Debian's tshark package; apt-get install tshark)"))
        func virtualCaptureDecodesInTShark() async throws {
            let tshark = try #require(Self.tshark)
            let path = Self.temporaryPath("served.btsnoop")
            let served = path.replacingOccurrences(of: ".btsnoop", with: "-1.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: served) }
            var services: [String] = []
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--sensor", "--capture", path])) { server in
                let lines = try await server.waitForReady()
                let transport = try #require(lines.first { $0.hasPrefix("tcp:") }, "\(server.diagnostics)")
                let sensorLine = try #require(lines.first { $0.hasPrefix("sensor: ") }, "\(server.diagnostics)")
                let address = try #require(sensorLine.split(separator: " ").first { $0.hasPrefix("C0:") }.map(String.init), "\(sensorLine)")
                let gatt = try await bluejay("gatt", "--hci", transport, "--address", address)
                #expect(gatt.status == 0, "\(gatt)")
                services = gatt.lines.filter { $0.hasPrefix("service ") }
                #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.diagnostics)")
            }
            let decoded = try await Self.runTShark(tshark, ["-r", served, "-V"])
            #expect(decoded.status == 0, "tshark failed: \(decoded.log)")
            let text = decoded.lines.joined(separator: "\n")
            #expect(!text.contains("Malformed"), "tshark found malformed packets")
            #expect(text.contains("Opcode: Read By Group Type Request (0x10)"))
            #expect(text.contains("Opcode: Read By Group Type Response (0x11)"))
            // Each service the command printed, with its handle range, is in a response as tshark decodes it.
            let heartRate = try #require(services.first { $0.hasPrefix("service 180D") }, "\(services)")
            let range = try #require(heartRate.split(separator: " ").first { $0.hasPrefix("0x") && $0.contains("-") }, "\(heartRate)")
            let bounds = range.lowercased().split(separator: "-")  // tshark prints hex in lower case
            try #require(bounds.count == 2)
            #expect(text.contains("Attribute Data, Handle: \(bounds[0]), Group End Handle: \(bounds[1]), UUID: Heart Rate"), "\(heartRate)")
        }

        @Test("a command stopped by SIGTERM still leaves a complete capture, up to its shutdown")
        func captureFlushedOnSIGTERM() async throws {
            let path = Self.temporaryPath("sigterm.btsnoop")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--sensor"])) { server in
                let transport = try #require(try await server.waitForReady().first { $0.hasPrefix("tcp:") }, "\(server.diagnostics)")
                try await using(try CLIProcess(["scan", "--hci", transport, "--duration", "60", "--json", "--capture", path])) { scan in
                    // Its stdout is buffered; the capture shows when it hears the sensor.
                    try await waitUntil("an advertising report in the capture", timeout: .seconds(30)) {
                        BTSnoopFile.parse(path)?.contains { $0.flags == 3 && $0.data.starts(with: [0x04, 0x3E]) } == true
                    }
                    #expect(try await scan.stop(signal: SIGTERM) == 0, "\(scan.diagnostics)")
                }
                #expect(try await server.stop(signal: SIGTERM) == 0, "\(server.diagnostics)")
            }
            let records = try BTSnoopFile.records(path)
            let commands = records.filter { $0.flags == 2 }.map { Array($0.data.dropFirst().prefix(2)) }
            // LE Set Extended Scan Enable (0x2042) twice: on, then off by the shutdown the signal
            // started, which waits for the controller's answer before it closes the capture.
            #expect(commands.filter { $0 == [0x42, 0x20] }.count == 2, "scan enable on and off: \(commands)")
            let answers = records.filter { $0.flags == 3 && $0.data.starts(with: [0x04, 0x0E]) && $0.data.count >= 6 }.map { Array($0.data[4..<6]) }
            #expect(answers.filter { $0 == [0x42, 0x20] }.count == 2, "both answered by Command Complete")
            #expect(records.contains { $0.flags == 3 && $0.data.starts(with: [0x04, 0x3E]) }, "advertising reports (LE Meta events)")
        }

        @Test("adapters says what it found and exits 0, also with no Bluetooth in the kernel")
        func adapters() async throws {
            let result = try await bluejay("adapters")
            #expect(result.status == 0, "\(result)")
            let first = try #require(result.lines.first, "\(result)")
            #expect(first.hasPrefix("no adapters: ") || first.hasPrefix("hci"), "\(result)")
            let json = try await bluejay("adapters", "--json")
            #expect(json.status == 0)
            #expect(try json.jsonObjects().count >= 1, "\(json)")
        }

        @Test("--version prints the version")
        func version() async throws {
            let result = try await bluejay("--version")
            #expect(result.status == 0)
            let version = try #require(result.lines.first)
            #expect(version.split(separator: ".").count == 3 && version.allSatisfy { $0.isNumber || $0 == "." }, "\(result)")
        }
    }
}
