import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension InteropSuites {
    /// `bluejay demo`, `bluejay virtual` and `bluejay sensor`: the embedded virtual controller
    /// and simulated heart-rate sensor, reached from the command line (no hardware), and the
    /// sensor driven by a Bumble central.
    @Suite("bluejay demo, virtual and sensor")
    struct CLIVirtualTests {
        @Test("demo --seconds 2 connects to the simulated sensor, writes the location, counts readings, exits 0")
        func demo() async throws {
            let result = try await bluejay("demo", "--seconds", "2", timeout: .seconds(60))
            #expect(result.status == 0, "\(result)")
            #expect(result.stdout.contains("location        Chest → Wrist (read back Wrist), restored to Chest"), "\(result)")
            let readings = try #require(result.lines.first { $0.hasPrefix("  heart rate") }, "\(result)")
            let count = Int(readings.split(separator: " ").dropFirst(2).first ?? "") ?? 0
            #expect(count >= 4, "a measurement every 250 ms for 2 s: \(readings)")
            #expect(result.stdout.contains("background task battery 87 %, serial SN-0001"), "\(result)")
            #expect(result.stdout.contains("disconnected"))
        }

        @Test("demo --json prints one summary object")
        func demoJSON() async throws {
            let result = try await bluejay("demo", "--seconds", "1", "--json", timeout: .seconds(60))
            #expect(result.status == 0, "\(result)")
            let objects = try result.jsonObjects()
            #expect(objects.count == 1)
            let summary = try #require(objects.first)
            #expect(summary["location_before"] as? String == "Chest")
            #expect(summary["location_written"] as? String == "Wrist")
            #expect(summary["location_restored"] as? String == "Chest")
            #expect((summary["readings"] as? Int ?? 0) >= 2)
            #expect(summary["serial"] as? String == "SN-0001")
        }

        @Test("virtual --sensor serves a controller; scan, read and demo find the simulated sensor through it")
        func virtualWithSensor() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--sensor", "--serial", "SN-CLI-7"])) { server in
                let lines = try await server.waitForReady()
                let transport = try #require(lines.first { $0.hasPrefix("tcp:127.0.0.1:") }, "\(lines)")
                let port = Int(transport.split(separator: ":").last ?? "") ?? 0
                #expect(port > 0, "port 0 becomes a real port: \(transport)")

                let scan = try await bluejay("scan", "--hci", transport, "--duration", "30", "--find", "Bluejay HRM", "--json")
                #expect(scan.status == 0, "\(scan)")
                let sensor = try #require(try scan.jsonObjects().first { $0["name"] as? String == "Bluejay HRM" }, "\(scan)")
                #expect((sensor["services"] as? [String])?.contains("180D") == true)
                let address = try #require(sensor["address"] as? String)

                let location = try await bluejay("read", "--hci", transport, "--address", address, "--service", "180D", "--characteristic", "2A38",
                                                 "--format", "u8")
                #expect(location.status == 0, "\(location)")
                #expect(location.lines == ["1"])
                let serial = try await bluejay("read", "--hci", transport, "--address", address, "--service", "180A", "--characteristic", "2A25",
                                               "--format", "utf8")
                #expect(serial.lines == ["SN-CLI-7"], "\(serial)")

                // The same demo central, on the served controller.
                let demo = try await bluejay("demo", "--hci", transport, "--seconds", "2.5", timeout: .seconds(60))
                #expect(demo.status == 0, "\(demo)")
                #expect(demo.stdout.contains("Chest → Wrist"), "\(demo)")
                #expect(demo.stdout.contains("serial SN-CLI-7"), "\(demo)")

                let stopped = try await server.stop(signal: SIGTERM)
                #expect(stopped == 0, "\(server.diagnostics)")
            }
        }

        @Test("link --phy 2m --data-length max --parameters low-latency sets and shows the link; bad values are usage errors")
        func linkSettings() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--sensor"])) { server in
                let lines = try await server.waitForReady()
                let transport = try #require(lines.first { $0.hasPrefix("tcp:127.0.0.1:") }, "\(lines)")
                let scan = try await bluejay("scan", "--hci", transport, "--duration", "30", "--find", "Bluejay HRM", "--json")
                let sensor = try #require(try scan.jsonObjects().first { $0["name"] as? String == "Bluejay HRM" }, "\(scan)")
                let address = try #require(sensor["address"] as? String)

                let link = try await bluejay("link", "--hci", transport, "--address", address, "--phy", "2m", "--data-length", "max",
                                             "--parameters", "low-latency", "--json")
                #expect(link.status == 0, "\(link)")
                let record = try #require(try link.jsonObjects().first, "\(link)")
                #expect(record["txPHY"] as? String == "LE 2M")
                #expect(record["rxPHY"] as? String == "LE 2M")
                #expect(record["maxTxOctets"] as? Int == 251)
                let interval = try #require(record["intervalMilliseconds"] as? Double, "\(record)")
                #expect((11.25...15).contains(interval), "the low-latency preset: \(interval) ms")
                #expect(record["supervisionTimeoutMilliseconds"] as? Int == 5000)

                let custom = try await bluejay("link", "--hci", transport, "--address", address, "--parameters", "30-45,4,6000")
                #expect(custom.status == 0, "\(custom)")
                #expect(custom.stdout.contains("latency 4, timeout 6000 ms"), "\(custom)")

                let bad = try await bluejay("link", "--hci", transport, "--address", address, "--parameters", "fast")
                #expect(bad.status == 64, "\(bad)")
                let badPHY = try await bluejay("link", "--hci", transport, "--address", address, "--phy", "3m")
                #expect(badPHY.status == 64, "\(badPHY)")
                _ = try await server.stop(signal: SIGTERM)
            }
        }

        @Test("gatt shows descriptor values; read and listen --format decode i8, i32, u64, f32, sfloat or say why not")
        func descriptorValuesAndFormats() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--sensor"])) { server in
                let lines = try await server.waitForReady()
                let transport = try #require(lines.first { $0.hasPrefix("tcp:127.0.0.1:") }, "\(lines)")
                let scan = try await bluejay("scan", "--hci", transport, "--duration", "30", "--find", "Bluejay HRM", "--json")
                let sensor = try #require(try scan.jsonObjects().first { $0["name"] as? String == "Bluejay HRM" }, "\(scan)")
                let address = try #require(sensor["address"] as? String)

                // The battery level's User Description, Presentation Format and CCCD, decoded.
                let gatt = try await bluejay("gatt", "--hci", transport, "--address", address)
                #expect(gatt.status == 0, "\(gatt)")
                let descriptors = gatt.lines.filter { $0.hasPrefix("    descriptor") }
                #expect(descriptors.contains { $0.contains("2901 (Characteristic User Description)") && $0.hasSuffix("\"Battery level\"") },
                        "\(gatt)")
                #expect(descriptors.contains {
                    $0.contains("2904 (Characteristic Presentation Format)")
                        && $0.hasSuffix("uint8, exponent 0, unit 0x27AD (percentage), namespace Bluetooth SIG, description 0x0")
                }, "\(gatt)")
                #expect(descriptors.contains { $0.contains("2902 (Client Characteristic Configuration)")
                        && $0.hasSuffix("notifications off, indications off") }, "\(gatt)")
                let json = try await bluejay("gatt", "--hci", transport, "--address", address, "--json")
                let userDescription = try #require(try json.jsonObjects().first { $0["uuid"] as? String == "2901" }, "\(json)")
                #expect(userDescription["decoded"] as? String == "\"Battery level\"")

                // Battery level 87 as i8; the one-octet value is refused by the wider formats (usage error 64, no crash).
                let level = try await bluejay("read", "--hci", transport, "--address", address, "--service", "180F", "--characteristic", "2A19",
                                              "--format", "i8")
                #expect(level.lines == ["87"], "\(level)")
                for format in ["i32", "u64", "f32", "sfloat"] {
                    let refused = try await bluejay("read", "--hci", transport, "--address", address, "--service", "180F",
                                                    "--characteristic", "2A19", "--format", format)
                    #expect(refused.status == 64, "\(format): \(refused)")
                    #expect(refused.stderr.contains("the value has 1 byte(s) but \(format) needs"), "\(format): \(refused)")
                }
                // A heart rate measurement (flags, 8-bit rate) read as SFLOAT: a number, the listen goes on;
                // as u64 each value is shown in hex with the reason.
                let sfloat = try await bluejay("listen", "--hci", transport, "--address", address, "--service", "180D",
                                               "--characteristic", "2A37", "--count", "2", "--timeout", "10", "--format", "sfloat")
                #expect(sfloat.status == 0 && sfloat.lines.count == 2, "\(sfloat)")
                let wrong = try await bluejay("listen", "--hci", transport, "--address", address, "--service", "180D",
                                              "--characteristic", "2A37", "--count", "2", "--timeout", "10", "--format", "u64")
                #expect(wrong.status == 0 && wrong.lines.count == 2, "\(wrong)")
                #expect(wrong.lines.allSatisfy { $0.contains("but u64 needs 8") }, "\(wrong)")

                let help = try await bluejay("read", "--help")
                for format in ["i8", "i32", "u64", "f32", "sfloat"] {
                    #expect(help.stdout.contains("\(format): "), "\(format) documented: \(help)")
                }
                #expect(["NaN", "NRes", "+INF", "-INF", "reserved"].allSatisfy { help.stdout.contains($0) }, "\(help)")
                let listenHelp = try await bluejay("listen", "--help")
                #expect(listenHelp.stdout.contains("sfloat: IEEE 11073"), "\(listenHelp)")
                #expect(try await server.stop(signal: SIGTERM) == 0)
            }
        }

        @Test("sensor on one controller of a virtual pair is found and read through the other")
        func sensorOnVirtualPair() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--listen", "tcp:127.0.0.1:0"])) { server in
                let transports = try await server.waitForReady().filter { $0.hasPrefix("tcp:") }
                try #require(transports.count == 2, "\(server.diagnostics)")

                try await using(try CLIProcess(["sensor", "--hci", transports[1], "--name", "Pair HRM", "--serial", "SN-PAIR", "--interval", "0.2"])) { sensor in
                    let advertising = try await sensor.waitForLine { $0.hasPrefix("sensor \"Pair HRM\"") }
                    let address = try #require(advertising.split(separator: " ").first { $0.hasPrefix("C0:") }.map(String.init), "\(advertising)")

                    let scan = try await bluejay("scan", "--hci", transports[0], "--duration", "30", "--find", "Pair HRM", "--service", "180D")
                    #expect(scan.status == 0, "\(scan)")
                    #expect(scan.stdout.contains("Pair HRM") && scan.stdout.contains(address), "\(scan)")
                    let serial = try await bluejay("read", "--hci", transports[0], "--address", address, "--service", "180A", "--characteristic", "2A25",
                                                   "--format", "utf8")
                    #expect(serial.lines == ["SN-PAIR"], "\(serial)")
                    let values = try await bluejay("listen", "--hci", transports[0], "--address", address, "--service", "180D", "--characteristic", "2A37",
                                                   "--count", "3", "--timeout", "5")
                    #expect(values.status == 0, "\(values)")
                    #expect(values.lines.count == 3)

                    _ = try await sensor.waitForLine { $0.hasPrefix("subscription: 2A37") }
                    _ = try await sensor.waitForLine { $0.hasPrefix("disconnected:") }
                    #expect(try await sensor.stop(signal: SIGINT) == 0, "\(sensor.diagnostics)")
                    #expect(sensor.lines.contains { $0.hasPrefix("stopped (SIGINT) after") }, "\(sensor.diagnostics)")
                    #expect(try await server.stop(signal: SIGTERM) == 0)
                }
            }
        }

        @Test("demo fails clearly: no sensor on the controller (69), interrupted (130, after disconnecting)")
        func demoFailures() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0"])) { server in
                let transport = try #require(try await server.waitForReady().first, "\(server.diagnostics)")
                let empty = try await bluejay("demo", "--hci", transport, "--scan-seconds", "0.5")
                #expect(empty.status == 69, "\(empty)")
                #expect(empty.stderr.contains("no heart-rate sensor (service 180D) found"), "\(empty)")
                #expect(try await server.stop(signal: SIGTERM) == 0)

                try await using(try CLIProcess(["demo", "--seconds", "30"])) { demo in
                    _ = try await demo.waitForLine { $0.hasPrefix("listening to heart rate") }
                    #expect(try await demo.stop(signal: SIGINT) == 130, "\(demo.diagnostics)")
                    #expect(demo.diagnostics.contains("bluejay: interrupted (SIGINT); disconnected"), "\(demo.diagnostics)")
                }
            }
        }

        @Test("A Bumble host on one controller of `bluejay virtual` is found and read by `bluejay` on another")
        func bumbleHostOnServedController() async throws {
            try await using(try CLIProcess(["virtual", "--listen", "tcp:127.0.0.1:0", "--listen", "tcp:127.0.0.1:0"])) { server in
                let transports = try await server.waitForReady().filter { $0.hasPrefix("tcp:") }
                try #require(transports.count == 2, "\(server.diagnostics)")
                let bumbleTransport = transports[0].replacingOccurrences(of: "tcp:", with: "tcp-client:")
                try await using(try BumbleRig.start(script: .hostOnVirtual,
                                                     arguments: ["--transport", bumbleTransport, "--address", "F1:E2:D3:C4:B5:A7", "--name", "Bumble Host"])) { bumble in
                    try await bumble.waitForReady(timeout: .seconds(60))

                    let scan = try await bluejay("scan", "--hci", transports[1], "--duration", "30", "--find", "Bumble Host")
                    #expect(scan.status == 0, "\(scan)")
                    #expect(scan.stdout.contains("F1:E2:D3:C4:B5:A7") && scan.stdout.contains("Bumble Host"), "\(scan)")
                    let greeting = try await bluejay("read", "--hci", transports[1], "--address", "F1:E2:D3:C4:B5:A7", "--random",
                                                     "--service", "6E40A000-B5A3-F393-E0A9-E50E24DCCA9E",
                                                     "--characteristic", "6E40A001-B5A3-F393-E0A9-E50E24DCCA9E", "--format", "utf8")
                    #expect(greeting.lines == ["Hello from Bumble on a Bluejay virtual controller"], "\(greeting)\n\(bumble.diagnostics)")
                    await bumble.shutdown()
                    #expect(try await server.stop(signal: SIGTERM) == 0)
                }
            }
        }

        @Test("--hci virtual is accepted by every command; bad --listen values are usage errors")
        func virtualTransportAndUsage() async throws {
            let scan = try await bluejay("scan", "--hci", "virtual", "--duration", "0.3")
            #expect(scan.status == 0, "\(scan)")
            #expect(scan.stdout.contains("no devices found"), "only this process is on its in-process link: \(scan)")
            let notFound = try await bluejay("scan", "--hci", "virtual", "--duration", "0.3", "--find", "Nobody")
            #expect(notFound.status == 69, "\(notFound)")
            #expect(notFound.stderr.contains("no device with address or name \"Nobody\""), "\(notFound)")
            let none = try await bluejay("virtual")
            #expect(none.status == 64 && none.stderr.contains("--listen"), "\(none)")
            let unix = try await bluejay("virtual", "--listen", "unix:/tmp/bluejay-nope")
            #expect(unix.status == 64, "\(unix)")
            let missing = try await bluejay("sensor")
            #expect(missing.status == 64, "\(missing)")
            let refused = try await bluejay("demo", "--hci", "tcp:127.0.0.1:1", "--seconds", "1")
            #expect(refused.status == 74, "\(refused)")
        }

        /// `nan`, `inf` and `1e300` once trapped converting to a duration.
        @Test("Numbers that are no usable number of seconds are usage errors, never a crash")
        func unusableNumbersAreUsageErrors() async throws {
            let invocations: [[String]] = [
                ["scan", "--hci", "virtual", "--duration", "nan"],
                ["scan", "--hci", "virtual", "--duration", "inf"],
                ["scan", "--hci", "virtual", "--duration", "1e300"],
                ["scan", "--hci", "virtual", "--duration", "-1"],
                ["listen", "--hci", "virtual", "--address", "C0:FF:EE:00:00:01", "--service", "180D", "--characteristic", "2A37",
                 "--timeout", "nan"],
                ["read", "--hci", "virtual", "--address", "C0:FF:EE:00:00:01", "--service", "180D", "--characteristic", "2A37",
                 "--connect-timeout", "1e300"],
                ["demo", "--seconds", "inf"],
                ["demo", "--scan-seconds", "0"],
                ["sensor", "--hci", "virtual", "--interval", "nan"],
                ["virtual", "--listen", "tcp:127.0.0.1:0", "--time-scale", "1e300"],
                ["virtual", "--listen", "tcp:127.0.0.1:0", "--time-scale", "nan"],
            ]
            for arguments in invocations {
                let result = try await bluejay(arguments)
                #expect(result.status == 64, "bluejay \(arguments.joined(separator: " ")): \(result)")
            }
        }

        @Test("demo --hci runs the same central against the Bumble rig's heart-rate peripheral")
        func demoAgainstBumble() async throws {
            try await withBumbleRig { rig in
                let result = try await bluejay("demo", "--hci", rig.transportSpecification, "--seconds", "0.5", timeout: .seconds(60))
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.contains("found Bluejay Peer"), "\(result)")
                #expect(result.stdout.contains("Chest → Wrist (read back Wrist), restored to Chest"), "\(result)")
                #expect(result.stdout.contains("battery 87 %, serial SN-0001"), "\(result)")
                let written = try await rig.waitForEvent(named: "written") { $0.string("uuid") == "2A38" && $0.bytes("value") == [2] }
                #expect(written.bool("with_response") == true)
                _ = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
            }
        }

        @Test("A Bumble central scans for `bluejay sensor`, connects, reads 2A38 and gets 2A37 notifications")
        func bumbleCentral() async throws {
            try await using(try BumbleRig.start(script: .central)) { central in
                try await central.waitForReady()
                try await using(try CLIProcess(["sensor", "--hci", central.transportSpecification, "--name", "Bumble Sees Me", "--interval", "0.1"])) { sensor in
                    _ = try await sensor.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("sensor \"Bumble Sees Me\"") }

                    try await central.request("scan", ["active": true])
                    // The predicate runs under the central's lock: read its address first.
                    let hostAddress = central.hostPublicAddress
                    let advertisement = try await central.waitForEvent(named: "advertisement", matching: {
                        $0.string("address") == hostAddress && $0.string("name") == "Bumble Sees Me"
                    }, timeout: .seconds(10))
                    #expect(advertisement.bool("connectable") == true)
                    #expect(advertisement["uuids"]?.arrayValue?.compactMap { $0.stringValue }.contains("180D") == true, "\(advertisement.line)")
                    try await central.request("stop_scan")

                    try await central.request("connect", ["address": hostAddress, "address_type": "public"])
                    let discovery = try await central.request("discover")
                    let services = try #require(discovery["services"]?.arrayValue?.compactMap { $0.objectValue })
                    let heartRate = try #require(services.first { $0["uuid"]?.stringValue == "180D" }, "\(discovery.line)")
                    let characteristics = try #require(heartRate["characteristics"]?.arrayValue?.compactMap { $0.objectValue })
                    let location = try #require(characteristics.first { $0["uuid"]?.stringValue == "2A38" }?["handle"]?.intValue)
                    let measurement = try #require(characteristics.first { $0["uuid"]?.stringValue == "2A37" }?["handle"]?.intValue)

                    #expect(try await central.request("read", ["handle": location]).bytes("value") == [1])
                    try await central.request("subscribe", ["handle": measurement])
                    for _ in 0..<3 {
                        let value = try await central.waitForEvent(named: "value", matching: { $0.int("handle") == measurement }, timeout: .seconds(5))
                        let bytes = value.bytes("value") ?? []
                        #expect(bytes.count == 2 && bytes.first == 0x06, "8-bit heart rate, skin contact: \(value.line)")
                        #expect((40...120).contains(Int(bytes.last ?? 0)), "a resting heart rate: \(value.line)")
                    }
                    try await central.request("disconnect")
                    _ = try await sensor.waitForLine { $0.hasPrefix("disconnected:") }
                    #expect(sensor.lines.contains { $0.hasPrefix("subscription: 2A37 (Heart Rate Measurement) notifications on") }, "\(sensor.diagnostics)")
                    #expect(sensor.lines.contains { $0.hasPrefix("read: 2A38 (Body Sensor Location) → 01") }, "\(sensor.diagnostics)")
                    #expect(try await sensor.stop(signal: SIGINT) == 0, "\(sensor.diagnostics)")
                }
            }
        }
    }
}
