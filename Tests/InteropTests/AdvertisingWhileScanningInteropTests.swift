import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Synchronization
import Testing

extension InteropSuites {
    /// Our host advertising and scanning at once, against a Bumble central that advertises too
    /// (central.py's `advertise`) and scans for us. After a reset, a controller takes either the
    /// legacy or the extended advertising, scanning and connecting commands, never both (Core 6.0,
    /// Vol 4, Part E, 3.1.1): Rootcanal refuses the first command of the other family with
    /// Command Disallowed, as real Bluetooth 5 controllers do, while Bumble's controller accepts
    /// any mix. On Rootcanal, which has extended advertising, these tests fail on a host that
    /// scans with the extended commands and advertises with the legacy ones.
    @Suite("Advertising while scanning", .sharedRootcanal)
    struct AdvertisingWhileScanningInteropTests {
        /// The Bumble central's advertisement: flags and manufacturer data (company 0xFFFF).
        static let bumbleData: [UInt8] = [0x02, 0x01, 0x06, 0x07, 0xFF, 0xFF, 0xFF, 0x0A, 0x0D, 0x0A, 0x0D]
        static let ourData = AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .completeLocalName("Bluejay Both")])

        @Test("Scanning, our host starts advertising too: the scan goes on and a Bumble scanner sees us",
              arguments: InteropController.allCases)
        func advertiseWhileScanning(on controller: InteropController) async throws {
            try await withBothSides(controller) { host, heard in
                try await host.scan(ScanOptions(active: false, filterDuplicates: false), handler: heard.record)
                try await Self.expectReportsGoOn(heard)
            } then: { central, host, heard in
                try await host.startAdvertising(Self.ourData)
                try await Self.expectBumbleSees(host, central)
                try await Self.expectReportsGoOn(heard)
                try await host.stopAdvertising()
                await host.stopScanning()
            }
        }

        @Test("Advertising, our host starts scanning too: it hears the Bumble central and is still seen",
              arguments: InteropController.allCases)
        func scanWhileAdvertising(on controller: InteropController) async throws {
            try await withBothSides(controller) { host, _ in
                try await host.startAdvertising(Self.ourData)
            } then: { central, host, heard in
                try await host.scan(ScanOptions(active: false, filterDuplicates: false), handler: heard.record)
                try await Self.expectReportsGoOn(heard)
                #expect(await host.isAdvertising)
                try await Self.expectBumbleSees(host, central)
                await host.stopScanning()
                try await host.stopAdvertising()
            }
        }

        // MARK: Support

        /// Counts the reports of one advertiser, from the scan's handler.
        final class Heard: Sendable {
            let advertiser: BluetoothAddress
            private let count = Mutex(0)

            init(_ advertiser: BluetoothAddress) { self.advertiser = advertiser }

            var reports: Int { count.withLock { $0 } }

            func record(_ advertisements: [Advertisement]) {
                let mine = advertisements.count { $0.peer.address == advertiser }
                if mine > 0 { count.withLock { $0 += mine } }
            }
        }

        /// A Bumble central on `controller` advertising ``bumbleData``, our host on the same radio;
        /// `first` starts one activity, then `then` the other.
        private func withBothSides(
            _ controller: InteropController,
            _ first: (LEHost, Heard) async throws -> Void,
            then: (BumbleRig, LEHost, Heard) async throws -> Void
        ) async throws {
            try await withBumbleRig(script: .central, controller: controller) { central in
                try await central.request("advertise", ["data": Self.bumbleData])
                let advertiser = try #require(BluetoothAddress(central.peerAddress))
                try await withHost(on: central) { host in
                    let heard = Heard(advertiser)
                    try await first(host, heard)
                    try await then(central, host, heard)
                }
            }
        }

        /// More reports of the Bumble central arrive from now on: the scan still runs.
        static func expectReportsGoOn(_ heard: Heard) async throws {
            let before = heard.reports
            try await waitUntil("more reports of the Bumble central than \(before)") { heard.reports > before }
        }

        /// The Bumble central, scanning now, reports our advertisement.
        static func expectBumbleSees(_ host: LEHost, _ central: BumbleRig) async throws {
            let address = try await host.publicAddressText
            try await central.request("scan", ["active": false])
            let seen = try await central.waitForEvent(named: "advertisement", matching: { $0.string("address") == address }, timeout: .seconds(10))
            #expect(seen.string("name") == "Bluejay Both")
            try await central.request("stop_scan")
        }
    }
}
