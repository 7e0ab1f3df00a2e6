import Foundation
import Testing

extension InteropSuites {
    /// The `bluejay` command line against a Bumble peripheral: each subcommand's output, in
    /// table and JSON form, and its errors (message on stderr, exit code).
    @Suite("bluejay CLI against a Bumble peripheral")
    struct CLIInteropTests {
        @Test("scan --json reports the peer with merged scan-response data; the table lists it")
        func scan() async throws {
            try await withBumbleRig { rig in
                let json = try await bluejay("scan", "--hci", rig.transportSpecification, "--duration", "30", "--find", "Bluejay Peer", "--json")
                #expect(json.status == 0, "\(json)")
                let objects = try json.jsonObjects()
                let peer = try #require(objects.last { ($0["address"] as? String) == rig.peerAddress && $0["name"] != nil && !($0["name"] is NSNull) },
                                        "\(json)")
                #expect(peer["name"] as? String == "Bluejay Peer")
                #expect(peer["address_type"] as? String == "random")
                #expect(peer["rssi"] as? Int == -50)
                #expect(peer["connectable"] as? Bool == true)
                #expect((peer["services"] as? [String])?.contains("180D") == true)
                let manufacturer = (peer["manufacturer_data"] as? [[String: Any]])?.first
                #expect(manufacturer?["company"] as? Int == 0xFFFF)
                #expect(manufacturer?["data"] as? String == "01020304")

                let table = try await bluejay("scan", "--hci", rig.transportSpecification, "--duration", "30", "--find", "Bluejay Peer", "--service", "180D")
                #expect(table.status == 0, "\(table)")
                #expect(table.lines.first?.hasPrefix("ADDRESS") == true)
                #expect(table.stdout.contains(rig.peerAddress))
                #expect(table.stdout.contains("Bluejay Peer"))

                let filtered = try await bluejay("scan", "--hci", rig.transportSpecification, "--duration", "1", "--service", "1810", "--json")
                #expect(filtered.status == 0)
                #expect(filtered.stdout.isEmpty, "nothing advertises 1810: \(filtered)")
            }
        }

        @Test("gatt lists services, characteristics, descriptors and readable values")
        func gatt() async throws {
            try await withBumbleRig { rig in
                let result = try await bluejay("gatt", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random")
                #expect(result.status == 0, "\(result)")
                #expect(result.stdout.contains("service 180D (Heart Rate)"))
                #expect(result.stdout.contains("characteristic 2A37 (Heart Rate Measurement)"))
                #expect(result.stdout.contains("characteristic 2A38"))
                #expect(result.stdout.contains("value 01"))
                #expect(result.stdout.contains("\"SN-0001\""))
                #expect(result.stdout.contains("descriptor 2902"))
                #expect(result.stdout.contains("read refused: Read Not Permitted"))

                let json = try await bluejay("gatt", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random", "--json")
                #expect(json.status == 0, "\(json)")
                let objects = try json.jsonObjects()
                let location = try #require(objects.first { $0["type"] as? String == "characteristic" && $0["uuid"] as? String == "2A38" })
                #expect(location["value"] as? String == "01")
                #expect(location["name"] as? String == "Body Sensor Location")
                #expect((location["properties"] as? [String])?.contains("write") == true)
                #expect(objects.contains { $0["type"] as? String == "service" && $0["uuid"] as? String == "180F" })

                // --service: only those services, and only their values are read.
                let some = try await bluejay("gatt", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                             "--service", "180D", "--service", "0000180A-0000-1000-8000-00805F9B34FB", "--json")
                #expect(some.status == 0, "\(some)")
                let shown = try some.jsonObjects()
                #expect(Set(shown.filter { $0["type"] as? String == "service" }.compactMap { $0["uuid"] as? String }) == ["180D", "180A"], "\(some)")
                #expect(shown.filter { $0["type"] as? String == "characteristic" }.allSatisfy { ["180D", "180A"].contains($0["service"] as? String) },
                        "\(some)")
                #expect(shown.contains { $0["uuid"] as? String == "2A25" && $0["value"] as? String == "534e2d30303031" }, "\(some)")
                let absent = try await bluejay("gatt", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                               "--service", "180D", "--service", "1234", "--service", "5678")
                #expect(absent.status == 69 && absent.stdout.isEmpty && absent.stderr.contains("services 1234, 5678"), "\(absent)")
                let malformed = try await bluejay("gatt", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                                  "--service", "18G")
                #expect(malformed.status == 64 && malformed.stderr.contains("is not a service UUID"), "\(malformed)")
            }
        }

        @Test("read and write a characteristic, in every format")
        func readAndWrite() async throws {
            try await withBumbleRig { rig in
                let hci = rig.transportSpecification
                let read = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                             "--service", "180D", "--characteristic", "2A38", "--format", "u8")
                #expect(read.status == 0, "\(read)")
                #expect(read.stdout == "1\n")

                let write = try await bluejay("write", "--hci", hci, "--address", rig.peerAddress, "--random",
                                              "--service", "180D", "--characteristic", "2A38", "--value", "04")
                #expect(write.status == 0, "\(write)")
                let written = try await rig.waitForEvent(named: "written") { $0.string("uuid") == "2A38" }
                #expect(written.bytes("value") == [0x04])

                let json = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                             "--service", "0000180A-0000-1000-8000-00805F9B34FB", "--characteristic", "2A25",
                                             "--format", "utf8", "--json")
                #expect(json.status == 0, "\(json)")
                let object = try #require(try json.jsonObjects().first)
                #expect(object["formatted"] as? String == "SN-0001")
                #expect(object["value"] as? String == "534e2d30303031")

                let noResponse = try await bluejay("write", "--hci", hci, "--address", rig.peerAddress, "--random",
                                                   "--service", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
                                                   "--characteristic", "6E400007-B5A3-F393-E0A9-E50E24DCCA9E",
                                                   "--value", "cafe", "--without-response")
                #expect(noResponse.status == 0, "\(noResponse)")
                let sink = try await rig.waitForEvent(named: "written") { $0.string("uuid") == "6E400007-B5A3-F393-E0A9-E50E24DCCA9E" }
                #expect(sink.bytes("value") == [0xCA, 0xFE])
                #expect(sink.bool("with_response") == false)
            }
        }

        @Test("listen prints notifications until --count, and --timeout without enough values is an error")
        func listen() async throws {
            try await withBumbleRig { rig in
                let hci = rig.transportSpecification
                let listener = try CLIProcess(["listen", "--hci", hci, "--address", rig.peerAddress, "--random",
                                               "--service", "180D", "--characteristic", "2A37", "--count", "5", "--json"])
                _ = try await rig.waitForEvent(named: "subscribed", matching: { $0.string("uuid") == "2A37" && $0.bool("notify") == true },
                                               timeout: .seconds(20))
                try rig.send(.notify(uuid: "2A37", count: 5, start: 40))
                let result = try await listener.finish()
                #expect(result.status == 0, "\(result)")
                let values = try result.jsonObjects().compactMap { $0["value"] as? String }
                #expect(values == ["012800", "012900", "012a00", "012b00", "012c00"])

                let starved = try await bluejay("listen", "--hci", hci, "--address", rig.peerAddress, "--random",
                                                "--service", "180D", "--characteristic", "2A37", "--count", "3", "--timeout", "1")
                #expect(starved.status == 75, "\(starved)")
                #expect(starved.stderr.contains("timeout"))
            }
        }

        @Test("listen without --count ends on Ctrl-C or SIGTERM with exit 0, after the values it got, and disconnects", arguments: [SIGINT, SIGTERM])
        func listenStoppedBySignal(signal: Int32) async throws {
            try await withBumbleRig { rig in
                try await using(try CLIProcess(["listen", "--hci", rig.transportSpecification, "--address", rig.peerAddress, "--random",
                                                "--service", "180D", "--characteristic", "2A37"])) { listener in
                    _ = try await rig.waitForEvent(named: "subscribed", matching: { $0.string("uuid") == "2A37" && $0.bool("notify") == true },
                                                   timeout: .seconds(20))
                    try await rig.request(.notify(uuid: "2A37", count: 2, start: 1))
                    try await listener.waitForLine { $0.hasPrefix("2 ") }
                    #expect(try await listener.stop(signal: signal) == 0, "\(listener.diagnostics)")
                }
                _ = try await rig.waitForEvent(named: "disconnected")
            }
        }

        @Test("Errors: refused read, absent device, unreachable transport, bad arguments")
        func errors() async throws {
            try await withBumbleRig { rig in
                let hci = rig.transportSpecification
                let refused = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                                "--service", "6E400001-B5A3-F393-E0A9-E50E24DCCA9E",
                                                "--characteristic", "6E400006-B5A3-F393-E0A9-E50E24DCCA9E")
                #expect(refused.status == 65, "\(refused)")
                #expect(refused.stderr.contains("Read Not Permitted"))

                let missing = try await bluejay("read", "--hci", hci, "--address", rig.peerAddress, "--random",
                                                "--service", "180D", "--characteristic", "2A99")
                #expect(missing.status == 69, "\(missing)")
                #expect(missing.stderr.contains("not found: characteristic 2A99"))

                let absent = try await bluejay("read", "--hci", hci, "--address", "C0:00:00:00:00:99", "--random",
                                               "--connect-timeout", "0.5", "--service", "180D", "--characteristic", "2A38")
                #expect(absent.status == 69, "\(absent)")
                #expect(absent.stderr.contains("device not found"))
            }
            let unreachable = try await bluejay("scan", "--hci", "tcp:127.0.0.1:1", "--duration", "1")
            #expect(unreachable.status == 74, "\(unreachable)")
            #expect(unreachable.stderr.contains("cannot open tcp:127.0.0.1:1"))

            let badTransport = try await bluejay("scan", "--hci", "bogus", "--duration", "1")
            #expect(badTransport.status == 74, "\(badTransport)")
            #expect(badTransport.stderr.contains("invalid transport"))

            let badUUID = try await bluejay("read", "--hci", "tcp:127.0.0.1:1", "--address", "C0:00:00:00:00:01",
                                            "--service", "18G", "--characteristic", "2A38")
            #expect(badUUID.status == 64, "\(badUUID)")
            #expect(badUUID.stderr.contains("not a service UUID"))

            let noController = try await bluejay("scan")
            #expect(noController.status == 64, "\(noController)")
            #expect(noController.stderr.contains("--hci"))
        }
    }
}
