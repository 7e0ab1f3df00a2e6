import Bluejay
import BluetoothHost
import BluetoothVirtual
import Testing

/// Bluejay's L2CAP channel calls against one of our hosts serving a PSM on the virtual link.
@Suite("Bluejay: L2CAP channels", .timeLimit(.minutes(1)))
struct L2CAPChannelTests {
    @Test("openL2CAPChannel in callback and async form; a refusal is BluejayError.l2cap; not connected fails at once")
    func openChannels() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:01")
        // An echo server on the peripheral.
        let server = try await peripheral.host.listen(psm: 0x0085) { channel in
            Task { for try await sdu in channel.sdus { try await channel.write(sdu) } }
        }
        let bluejay = try await startBluejay(on: link)
        let notConnected: Result<L2CAPChannel, BluejayError> = try await callback { done in
            bluejay.openL2CAPChannel(psm: server.psm) { done($0) }
        }
        #expect(throws: BluejayError.notConnected) { try notConnected.get() }

        let connected: ConnectionResult = try await callback { done in
            bluejay.connect(peripheral.identifier, timeout: .seconds(10)) { done($0) }
        }
        #expect(connected == .success(peripheral.identifier))
        let opened: Result<L2CAPChannel, BluejayError> = try await callback { done in
            bluejay.openL2CAPChannel(psm: server.psm) { done($0) }
        }
        let first = try opened.get()
        try await first.write([1, 2, 3])
        #expect(try await first.read() == [1, 2, 3])

        let second = try await bluejay.openL2CAPChannel(psm: server.psm, parameters: .init(mtu: 64, mps: 64, initialCredits: 2))
        #expect(second.localCID != first.localCID && second.mtu == 64)
        try await second.write(Array(repeating: 9, count: 40))
        #expect(try await second.read() == Array(repeating: 9, count: 40))

        await #expect(throws: BluejayError.l2cap(.refused(.spsmNotSupported))) {
            _ = try await bluejay.openL2CAPChannel(psm: 0x00F0)
        }
        first.close()
        second.close()
        await bluejay.stop()
        await peripheral.shutdown()
    }
}
