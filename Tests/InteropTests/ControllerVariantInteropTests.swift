import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// The rig's controller variants (`--controller-variant`), each standing for a class of real
    /// controllers: on each the host starts and works (scan, connect, GATT, pairing) with what
    /// is there, and says what it does without, in `ControllerInfo.adaptations`, in its
    /// power-on log and in `bluejay adapters --hci`.
    @Suite("Controller variants: the host works with what each class of controller has")
    struct ControllerVariantInteropTests {
        /// One variant: what the host must report, and checks of its own.
        struct Variant: Sendable, CustomTestStringConvertible {
            let name: String
            /// Reported from power-on (``ControllerInfo/adaptations``).
            let adaptations: [ControllerAdaptation]
            /// Whether LE Read PHY and LE Set PHY are unavailable: the host must fail them with a
            /// typed error (Unknown HCI Command), asking the controller at most once.
            var lacksPHYCommands = false
            let check: @Sendable (ControllerInfo, LocalIdentity) -> Void
            var testDescription: String { name }
        }

        static let variants: [Variant] = [
            Variant(name: "no-public-address", adaptations: [.noPublicAddress]) { info, identity in
                #expect(!info.hasPublicAddress && info.staticAddress == nil)
                #expect(identity.isGenerated && identity.address.address.isStaticRandom)
            },
            Variant(name: "zephyr-static-address", adaptations: [.noPublicAddress]) { info, identity in
                #expect(info.staticAddress == BluetoothAddress("C4:5A:7E:11:22:33"))
                #expect(identity.source == .controllerStaticAddress && identity.address.address == info.staticAddress)
            },
            Variant(name: "shared-buffers", adaptations: [.sharedACLBuffers]) { info, identity in
                // Read Buffer Size's ACL buffers (the rig's 100 octets x 10), not LE Read Buffer Size's 0.
                #expect(info.sharesACLBuffers && info.aclDataLength == 100 && info.aclBufferCount == 10)
                #expect(identity.source == .publicAddress)
            },
            Variant(name: "no-buffer-size-v2", adaptations: [.noLEReadBufferSizeV2]) { info, _ in
                #expect(!info.supports(.leReadBufferSizeV2))
                #expect(info.aclDataLength == 27 && info.aclBufferCount == 64, "LE Read Buffer Size [v1]")
            },
            Variant(name: "bluetooth-4.2", adaptations: [.legacyCommandsOnly, .noLE2MPHY, .noLECodedPHY, .noLEReadBufferSizeV2],
                    lacksPHYCommands: true) { info, _ in
                #expect(info.version.hciVersion == 0x08)
                #expect(info.commandFamily == .legacy && !info.supportsExtendedAdvertising && !info.supportsExtendedScanning)
            },
            Variant(name: "tiny-lists", adaptations: [.smallFilterAcceptList(1), .smallResolvingList(1)]) { info, _ in
                #expect(info.filterAcceptListSize == 1 && info.resolvingListSize == 1)
            },
            Variant(name: "unknown-optional-commands", adaptations: [], lacksPHYCommands: true) { info, _ in
                // Listed: the host learns they are unknown only by asking.
                #expect(info.supports(.leSetDataLength) && info.supports(.leReadPHY) && info.supports(.leSetDefaultPHY))
            },
        ]

        static let service: BluetoothUUID = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        static let longValue: BluetoothUUID = "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"

        @Test("On each variant: adapters reports it, then scan, connect, GATT, pairing and link settings work or fail typed",
              arguments: variants)
        func scenario(_ variant: Variant) async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-variant-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let capturePath = directory + "/host.btsnoop"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try await withBumbleRig(arguments: ["--controller-variant", variant.name, "--plugin", "bluejay_pairing"]) { rig in
                // bluejay adapters: one field per adaptation, and the power-on log says each.
                let report = try await bluejay("adapters", "--hci", rig.transportSpecification, "--bond-directory", directory, "--json", "--verbose")
                #expect(report.status == 0, "\(report)")
                let reported = try #require(try report.jsonObjects().first, "\(report)")["adaptations"] as? [String] ?? []
                for adaptation in variant.adaptations {
                    #expect(reported.contains("\(adaptation)"), "\(reported)")
                    let logged = adaptation == .noPublicAddress ? "controller has no public address: identity" : "controller: \(adaptation)"
                    #expect(report.stderr.contains(logged), "the power-on log lacks \(logged)")
                }

                var configuration = HostConfiguration()
                configuration.capture = try HCICapture(path: capturePath, mode: .replace)
                try await withHost(on: rig, configuration: configuration) { host in
                    let info = try #require(await host.controllerInfo)
                    let identity = try #require(await host.identity)
                    for adaptation in variant.adaptations { #expect(info.adaptations.contains(adaptation), "\(info.adaptations)") }
                    variant.check(info, identity)

                    // Scan, connect, GATT (a long read crosses the ACL buffers in many fragments).
                    let peer = try rig.peer
                    var heard: Advertisement?
                    for try await advertisement in try await host.scan() where advertisement.peer.address == peer.address {
                        heard = advertisement
                        break
                    }
                    await host.stopScanning()
                    #expect(heard?.isConnectable == true, "\(String(describing: heard))")
                    for round in 1...2 {
                        let connection = try await host.connect(to: peer)
                        let serial = try await connection.gatt.characteristic("2A25", inService: "180A")
                        #expect(try await connection.gatt.read(serial) == Array("SN-0001".utf8))
                        let long = try await connection.gatt.characteristic(Self.longValue, inService: Self.service)
                        #expect(try await connection.gatt.readLongValue(handle: long.valueHandle) == (0..<600).map { UInt8($0 % 256) })

                        if round == 1 {
                            // Pairing (LE Secure Connections, Just Works) and a protected read.
                            let security = try await host.pair(connection)
                            #expect(security.isEncrypted && security.isSecureConnections)
                            let secret = try await connection.gatt.characteristic(PairingInteropTests.encrypted, inService: PairingInteropTests.service)
                            #expect(try await connection.gatt.read(secret) == Array("secret".utf8))
                        }

                        // Link settings: present, or refused with a typed error.
                        if variant.lacksPHYCommands {
                            await #expect(throws: HostError.hci(.commandFailed(LEReadPHYCommand.opcode, .unknownCommand))) {
                                _ = try await connection.readPHY()
                            }
                        } else {
                            #expect(try await connection.readPHY() == .le1M)
                        }
                        try await connection.disconnect()
                    }
                    // What the host learned by asking is reported too.
                    if variant.name == "unknown-optional-commands" {
                        let learned = await host.controllerInfo?.adaptations ?? []
                        #expect(learned.contains(.unknownCommand(LESetDataLengthCommand.opcode)), "\(learned)")
                        #expect(learned.contains(.unknownCommand(LEReadPHYCommand.opcode)), "\(learned)")
                    }
                }

                // The capture: never Command Disallowed; an unknown command asked at most once.
                let answers = try BTSnoopFile.answers(capturePath)
                #expect(!answers.contains { $0.status == HCIStatus.commandDisallowed.rawValue }, "\(answers)")
                let unknown = answers.filter { $0.status == HCIStatus.unknownCommand.rawValue }.map(\.opcode)
                #expect(unknown.count == Set(unknown).count, "an unknown command sent again: \(unknown.map { String(format: "0x%04X", $0) })")
                let commands = try BTSnoopFile.commands(capturePath).map(\.opcode)
                if variant.name == "bluetooth-4.2" {
                    #expect(!commands.contains { LECommandFamily(opcode: HCIOpcode(rawValue: $0)) == .extended })
                    #expect(!commands.contains(LEReadPHYCommand.opcode.rawValue) && !commands.contains(LEReadBufferSizeV2Command.opcode.rawValue))
                }
            }
        }
    }
}
