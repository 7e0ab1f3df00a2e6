@testable import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothVirtual
import Testing

/// PHY, data length and connection parameters through Bluejay's callback API and
/// `RemotePeripheral`, against a peripheral of our own stack on a virtual link.
@Suite("Bluejay: PHY, data length and connection parameters", .timeLimit(.minutes(1)))
struct LinkSettingsTests {
    @Test("Callbacks: setPHY, setDataLength and a parameter preset deliver what is in effect")
    func callbacks() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:21")
        let bluejay = try await startBluejay(on: link)
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))

        let phy: Result<ConnectionPHY, BluejayError> = try await callback { done in bluejay.setPHY(.le2M) { done($0) } }
        #expect(phy == .success(ConnectionPHY(tx: .le2M, rx: .le2M)))
        let length: Result<DataLength, BluejayError> = try await callback { done in bluejay.setDataLength { done($0) } }
        #expect((try? length.get())?.maxTxOctets == 251, "the controller's maximum: \(length)")
        let parameters: Result<ConnectionParameters, BluejayError> = try await callback { done in
            bluejay.requestConnectionParameters(.lowPower) { done($0) }
        }
        let applied = try parameters.get()
        #expect(ConnectionParameterPreference.lowPower.intervalRange.contains(applied.interval))
        #expect(applied.peripheralLatency == 2)
        await bluejay.stop()
        let afterStop: Result<ConnectionPHY, BluejayError> = try await callback { done in bluejay.setPHY(.le2M) { done($0) } }
        #expect(afterStop == .failure(.notStarted))
        await peripheral.shutdown()
    }

    @Test("RemotePeripheral: setPHY, requestConnectionParameters and the link updates stream")
    func remotePeripheral() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:22")
        let controller = link.addController(name: "central", address: try #require(BluetoothAddress("C0:00:00:00:00:02")))
        let host = LEHost(transport: controller.makeTransport())
        try await host.powerOn()
        let central = BluejayCentral(host: host)
        let remote = try await central.connect(peripheral.identifier, timeout: .seconds(10))
        let updates = remote.linkUpdates()
        #expect(remote.phy == .le1M)
        #expect(try await remote.setPHY(.le2M) == ConnectionPHY(tx: .le2M, rx: .le2M))
        #expect(remote.phy.tx == .le2M)
        let fast = try await remote.requestConnectionParameters(.lowLatency)
        #expect(ConnectionParameterPreference.lowLatency.intervalRange.contains(fast.interval))
        #expect(remote.connectionParameters == fast)
        var seen: [LinkChange] = []
        for await change in updates {
            if case .dataLength = change { continue }
            seen.append(change)
            if seen.count == 2 { break }
        }
        #expect(seen == [.phy(ConnectionPHY(tx: .le2M, rx: .le2M)), .parameters(fast)])
        await central.shutdown()
        await host.shutdown()
        await peripheral.shutdown()
    }
}
