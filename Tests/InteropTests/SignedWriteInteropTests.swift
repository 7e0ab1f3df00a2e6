import BluetoothCore
import BluetoothHost
import Testing

extension InteropSuites {
    /// Signed writes against Bumble. Bumble 0.0.236 neither signs nor checks them, so the
    /// rig's plugin (bumble/bluejay_signing.py) checks ours with Bumble's AES-CMAC and the CSRK
    /// Bumble stored when we bonded: an independent reading of the MAC's octet order. Our
    /// server's side is tested between two of our hosts (BluetoothVirtualTests, SignedWriteTests).
    @Suite("Signed writes against Bumble")
    struct SignedWriteInteropTests {
        static let plugins = ["--plugin", "bluejay_pairing", "--plugin", "bluejay_signing"]
        static let service = BluetoothUUID(stringLiteral: "6E400311-B5A3-F393-E0A9-E50E24DCCA9E")
        static let signed = BluetoothUUID(stringLiteral: "6E400312-B5A3-F393-E0A9-E50E24DCCA9E")

        @Test("Our central's signed writes pass Bumble's check with the CSRK we distributed; counters go up")
        func centralSigns() async throws {
            try await withBumbleRig(arguments: Self.plugins) { rig in
                try await withHost(on: rig) { host in
                    let first = try await host.connect(to: try rig.peer)
                    _ = try await host.pair(first)
                    // Bumble has our keys (the central distributes last).
                    try await rig.waitForEvent(named: "pairing_done") { $0.bool("ok") == true }
                    try await first.disconnect()

                    // A new link, not encrypted: the writes are signed.
                    let second = try await host.connect(to: try rig.peer)
                    #expect(!second.security.isEncrypted)
                    let characteristic = try await second.gatt.characteristic(Self.signed, inService: Self.service)
                    try await second.gatt.writeSigned([0x01, 0x02], to: characteristic)
                    try await second.gatt.writeSigned([0x03], to: characteristic)
                    let one = try await rig.waitForEvent(named: "signed_write")
                    let two = try await rig.waitForEvent(named: "signed_write")
                    #expect(one.bool("ok") == true && one.int("counter") == 0 && one.string("value") == "0102", "\(one)")
                    #expect(two.bool("ok") == true && two.int("counter") == 1 && two.string("value") == "03", "\(two)")
                    #expect(try await second.gatt.read(characteristic) == [0x03], "Bumble stored the value")
                    #expect(await host.bonds().first?.localKeys.signCounter == 2)
                    try await second.disconnect()
                }
            }
        }
    }
}
