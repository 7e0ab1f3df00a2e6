import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Testing

@Suite("Advertising state and configuration", .timeLimit(.minutes(1)))
struct AdvertisingStateTests {
    private func configuration(restarts: Bool = false, connectable: Bool = true) throws -> AdvertisingConfiguration {
        try AdvertisingConfiguration(data: AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .completeLocalName("Bluejay")]),
                                     scanResponse: nil,
                                     parameters: AdvertisingParameters(isConnectable: connectable, restartsAfterDisconnection: restarts))
    }

    @Test("Data is encoded into the commands; the parameters pick the PDU type")
    func commands() throws {
        let configuration = try AdvertisingConfiguration(
            data: AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .completeLocalName("Bluejay")]),
            scanResponse: AdvertisingData([.serviceUUIDs16([0x180F], complete: true), .txPowerLevel(-4)]),
            parameters: AdvertisingParameters(intervalRange: 0x0030...0x0040))
        #expect(configuration.dataCommand.data == [0x02, 0x01, 0x06, 0x08, 0x09] + Array("Bluejay".utf8))
        #expect(configuration.scanResponseCommand.data == [0x03, 0x03, 0x0F, 0x18, 0x02, 0x0A, 0xFC])
        let parameters = configuration.parametersCommand
        #expect(parameters.intervalMin == 0x0030 && parameters.intervalMax == 0x0040)
        #expect(parameters.advertisingType == .advInd)
        #expect(AdvertisingParameters(isConnectable: false).advertisingType == .advScanInd)
        #expect(AdvertisingParameters(isConnectable: false, isScannable: false).advertisingType == .advNonconnInd)
        // LE Set Advertising Data always carries 32 parameter octets (Core 6.0, Vol 4, Part E, 7.8.7).
        #expect(configuration.dataCommand.encode().count == 3 + 32)
    }

    @Test("Data that does not fit in 31 octets is refused with a clear error")
    func tooLong() {
        let name = String(repeating: "n", count: 30)
        #expect(throws: HostError.invalidArgument("advertising data: the advertising data needs 35 octets but only 31 fit; remove fields or move some to the scan response")) {
            try AdvertisingConfiguration(data: AdvertisingData([.flags(.leOnlyGeneralDiscoverable), .completeLocalName(name)]),
                                         scanResponse: nil, parameters: AdvertisingParameters())
        }
        #expect(throws: HostError.self) {
            try AdvertisingConfiguration(data: AdvertisingData(), scanResponse: AdvertisingData([.completeLocalName(name + "xx")]),
                                         parameters: AdvertisingParameters())
        }
        #expect(throws: HostError.self) {
            try AdvertisingConfiguration(data: AdvertisingData(), scanResponse: AdvertisingData([.completeLocalName("x")]),
                                         parameters: AdvertisingParameters(isConnectable: false, isScannable: false))
        }
        #expect(throws: HostError.self) {
            try AdvertisingConfiguration(data: AdvertisingData(), scanResponse: nil, parameters: AdvertisingParameters(intervalRange: 0x0010...0x0020))
        }
    }

    @Test("An iBeacon is 30 octets of legacy advertising data")
    func beacon() throws {
        let beacon = IBeacon(proximityUUID: "DE6E8DAD-8D99-4E20-8C4B-D9CC2F9A7E83", major: 100, minor: 1, measuredPower: -59)
        let configuration = try AdvertisingConfiguration(data: beacon.advertisingData, scanResponse: nil,
                                                         parameters: AdvertisingParameters(isConnectable: false, isScannable: false))
        #expect(configuration.data.count == 30)
        #expect(IBeacon(advertisingData: try AdvertisingData.decode(configuration.data)) == beacon)
    }

    @Test("A central connecting ends connectable advertising; its disconnection restarts it when asked")
    func restartAfterDisconnection() throws {
        var state = AdvertisingState()
        state.didStart(try configuration(restarts: true))
        #expect(state.isEnabled)
        let ended = state.didConnect(handle: 0x0040)
        #expect(ended)
        #expect(!state.isEnabled)
        // Another link ending changes nothing.
        let other = state.didDisconnect(handle: 0x0041)
        #expect(other == nil)
        let restart = state.didDisconnect(handle: 0x0040)
        #expect(restart != nil)
        state.didRestart()
        #expect(state.isEnabled)
        let again = state.didDisconnect(handle: 0x0040)
        #expect(again == nil)
    }

    @Test("No restart unless asked, nor after advertising was stopped")
    func noRestart() throws {
        var state = AdvertisingState()
        state.didStart(try configuration(restarts: false))
        state.didConnect(handle: 1)
        let unasked = state.didDisconnect(handle: 1)
        #expect(unasked == nil)

        state.didStart(try configuration(restarts: true))
        state.didConnect(handle: 2)
        state.didStop()
        let stopped = state.didDisconnect(handle: 2)
        #expect(stopped == nil)
    }

    @Test("A connection does not end non-connectable advertising")
    func nonConnectable() throws {
        var state = AdvertisingState()
        state.didStart(try configuration(restarts: true, connectable: false))
        let ended = state.didConnect(handle: 3)
        #expect(!ended)
        #expect(state.isEnabled)
    }
}
