import BluetoothCore
import BluetoothCrypto
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Testing

extension InteropSuites {
    /// This device's own privacy (``PrivacySettings``) against a Bumble central: what a scanner
    /// sees of our peripheral, and a bonded central that follows it across address changes.
    @Suite("Our own privacy against a Bumble central", .sharedRootcanal)
    struct OwnPrivacyInteropTests {
        static let irk: UInt128 = 0x0F1E_2D3C_4B5A_6978_8796_A5B4_C3D2_E1F0
        static let lifetime: Duration = .seconds(2)
        static let service = BluetoothUUID("6E400601-B5A3-F393-E0A9-E50E24DCCA9E")
        static let secret = BluetoothUUID("6E400602-B5A3-F393-E0A9-E50E24DCCA9E")

        /// The next advertisement the central reports from one of our resolvable private
        /// addresses other than `previous`, and when Bumble heard it (its own clock, in seconds:
        /// the test's task may see the event later than that on a loaded machine).
        private func nextAddress(after previous: Set<String>, on central: BumbleRig, timeout: Duration = .seconds(20))
            async throws -> (address: String, at: Duration) {
            let event = try await central.waitForEvent(named: "advertisement", matching: { event in
                guard event.string("address_type") == "random", let text = event.string("address"), !previous.contains(text),
                      let address = BluetoothAddress(text) else { return false }
                return ResolvablePrivateAddress.resolves(address.rawValue, irk: Self.irk)
            }, timeout: timeout)
            let heard = try #require(event.fields["t"]?.doubleValue, "the rig stamps each advertisement")
            return (try #require(event.string("address")), .milliseconds(Int64((heard * 1000).rounded())))
        }

        @Test("A Bumble scanner sees our address change every addressLifetime, never our identity; a bonded Bumble central reconnects and re-encrypts across the changes",
              arguments: InteropController.allCases)
        func rotationSeenByAScannerAndABondedCentral(on controller: InteropController) async throws {
            try await withBumbleRig(script: .central, arguments: ["--plugin", "bluejay_pairing"], controller: controller) { central in
                var configuration = HostConfiguration()
                configuration.identityResolvingKey = Self.irk
                configuration.privacy = PrivacySettings(mode: .device, addressLifetime: Self.lifetime)
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification), configuration: configuration)
                do {
                    try await manager.powerOn()
                    let identity = try await #require(manager.host).publicAddressText
                    let published = try await manager.add(PeripheralService(uuid: Self.service, characteristics: [
                        PeripheralCharacteristic(uuid: Self.secret, properties: [.read], readSecurity: .encryption, value: Array("secret".utf8)),
                    ]))
                    let secret = Int(try #require(published.characteristic(Self.secret)).valueHandle)
                    try await manager.startAdvertising(name: "Bluejay Private", serviceUUIDs: [Self.service])
                    _ = try await central.request("scan", ["active": false])

                    // Three addresses in a row: the time between the second's and the third's
                    // first sighting is one lifetime (the first was already in use for a while).
                    let first = try await nextAddress(after: [], on: central)
                    let second = try await nextAddress(after: [first.address], on: central)
                    let third = try await nextAddress(after: [first.address, second.address], on: central)
                    let interval = third.at - second.at
                    #expect(interval > Self.lifetime - .milliseconds(500) && interval < Self.lifetime + .seconds(3),
                            "changed after \(interval), the lifetime is \(Self.lifetime)")
                    let heard = central.receivedEvents.filter { $0.name == "advertisement" }
                    #expect(heard.allSatisfy { $0.string("address") != identity }, "our identity address never goes over the air")

                    // Bond at one address…
                    _ = try await central.request("stop_scan")
                    _ = try await central.request("connect", ["address": third.address, "address_type": "random"])
                    #expect(try await central.waitForEvent(named: "connected").string("peer_address") == third.address)
                    let paired = try await central.request("initiate")
                    #expect(paired.bool("paired") == true, "\(paired)")
                    #expect(try await central.request("read", ["handle": secret]).bytes("value") == Array("secret".utf8))
                    _ = try await central.request("disconnect")

                    // …reconnect at later ones: the central resolves them with the IRK we gave
                    // it and encrypts with the bond, no pairing.
                    var seen: Set<String> = [first.address, second.address, third.address]
                    for round in 0..<2 {
                        try await manager.startAdvertising(name: "Bluejay Private", serviceUUIDs: [Self.service])
                        _ = try await central.request("scan", ["active": false])
                        let next = try await nextAddress(after: seen, on: central)
                        seen.insert(next.address)
                        _ = try await central.request("stop_scan")
                        _ = try await central.request("connect", ["address": next.address, "address_type": "random"])
                        let connected = try await central.waitForEvent(named: "connected")
                        #expect(connected.string("peer_address") == identity, "round \(round): the central resolved us to our identity")
                        let encrypted = try await central.request("encrypt")
                        #expect(encrypted.bool("encrypted") == true, "round \(round): \(encrypted)")
                        #expect(try await central.request("read", ["handle": secret]).bytes("value") == Array("secret".utf8))
                        _ = try await central.request("disconnect")
                    }
                    #expect(central.receivedEvents.filter { $0.name == "pairing_done" }.count == 1, "paired once only")
                    #expect(await manager.bonds().count == 1)
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }
}
