import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// Extended advertising and scanning against Bumble, both ways. The rig runs controller A
    /// with `--extended-controller` (it claims LE Extended Advertising) and reports data past
    /// 229 octets in several reports as a controller does; `bluejay_extadv.py` makes a Bumble
    /// peripheral advertise with an advertising set. See bumble/README.md for what Bumble's
    /// host cannot do (more than 251 octets, reassembly). Both also run on Rootcanal, whose
    /// controllers have extended advertising and report long data in several reports too.
    @Suite("Extended advertising interop with Bumble", .sharedRootcanal)
    struct ExtendedAdvertisingInteropTests {
        /// `length` octets: flags, then manufacturer data (company 0xFFFF) with a counting payload.
        static func data(length: Int) -> [UInt8] {
            [0x02, 0x01, 0x06, UInt8(length - 4), 0xFF, 0xFF, 0xFF] + (0..<(length - 7)).map { UInt8($0 % 256) }
        }

        static let longData = data(length: 200)

        /// 245 octets arrive in two reports (229 + 16, the first "incomplete, more to come").
        @Test("Our host scans a Bumble peripheral's long extended advertisement and sees it whole",
              arguments: InteropController.allCases, [200, 245])
        func bumbleAdvertisesOurHostScans(on controller: InteropController, length: Int) async throws {
            let expected = Self.data(length: length)
            try await withBumbleRig(arguments: ["--extended-controller", "--plugin", "bluejay_extadv"], controller: controller) { rig in
                try await rig.request("extended_advertise", ["data": Hex.encode(expected), "sid": 3])
                let peer = try rig.peer
                try await withHost(on: rig) { host in
                    #expect(await host.controllerInfo?.supportsExtendedScanning == true)
                    var found: Advertisement?
                    for try await advertisement in try await host.scan(ScanOptions(active: false))
                    where advertisement.peer.address == peer.address && advertisement.isExtended {
                        found = advertisement
                        break
                    }
                    await host.stopScanning()
                    let advertisement = try #require(found)
                    #expect(try advertisement.advertisingData.encoded(maximumLength: 1650) == expected)
                    #expect(!advertisement.isDataTruncated && !advertisement.isDataPartial)
                    #expect(advertisement.advertisingSID == 0 || advertisement.advertisingSID == 3)
                    #expect(advertisement.primaryPHY == .le1M)
                }
            }
        }

        @Test("A Bumble central scans our 200-octet advertising set", arguments: InteropController.allCases)
        func ourHostAdvertisesBumbleScans(on controller: InteropController) async throws {
            try await withBumbleRig(script: .central, arguments: ["--extended-controller"], controller: controller) { central in
                try await withHost(on: central) { host in
                    #expect(await host.supportsExtendedAdvertising)
                    let data = AdvertisingData.decodeLeniently(Self.longData)
                    let set = try await host.startAdvertisingSet(data)
                    #expect(!set.isLegacyFallback)
                    let address = try await host.publicAddressText
                    try await central.request("scan", ["active": false])
                    let advertisement = try await central.waitForEvent(named: "advertisement", matching: {
                        $0.string("address") == address && $0.bytes("data")?.count == 200
                    }, timeout: .seconds(20))
                    #expect(advertisement.bytes("data") == Self.longData)
                    #expect(advertisement.bool("connectable") == false)
                    try await central.request("stop_scan")
                    try await host.stopAdvertisingSet(set)
                }
            }
        }

        /// Core 6.0, Vol 4, Part E, 3.1.1: the rig's controller A refuses the legacy commands once
        /// the extended ones were used, as real Bluetooth 5 controllers do. Our legacy advertising
        /// API runs on an advertising set with legacy PDUs beside extended scanning.
        @Test("Legacy advertising on an extended controller: a legacy-PDU set beside scanning; a Bumble central connects, it restarts after")
        func legacyAdvertisingOnAnExtendedController() async throws {
            try await using(try BumbleRig.start(script: .central, arguments: ["--extended-controller"])) { central in
                try await central.waitForReady()
                try await withHost(on: central) { host in
                    #expect(await host.controllerInfo?.commandFamily == .extended)
                    // The host scans first (extended), then advertises with the legacy API.
                    try await host.scan(handler: { _ in })
                    try await host.startAdvertising(AdvertisingData([.completeLocalName("Legacy on Set")]),
                                                    parameters: AdvertisingParameters(restartsAfterDisconnection: true))
                    await host.stopScanning()
                    let address = central.hostPublicAddress
                    try await central.request("scan", ["active": false])
                    let heard = try await central.waitForEvent(named: "advertisement") { $0.string("address") == address }
                    #expect(heard.bool("connectable") == true, "\(heard)")
                    try await central.request("stop_scan")
                    _ = try await central.request("connect", ["address": address, "address_type": "public"])
                    try await waitUntil("the advertising ended with the connection") { await !host.isAdvertising }
                    _ = try await central.request("disconnect")
                    try await waitUntil("advertising again after the disconnection") { await host.isAdvertising }
                    // And a second central connection works through the restarted set.
                    _ = try await central.request("connect", ["address": address, "address_type": "public"])
                    _ = try await central.request("disconnect")
                    try await host.stopAdvertising()
                    #expect(await !host.isAdvertising)
                }
            }
        }
    }
}
