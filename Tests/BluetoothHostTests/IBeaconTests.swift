import BluetoothCore
import Testing
import BluetoothHost

/// E2C56DB5-DFFB-48D2-B060-D0F5A71096E0, major 1, minor 2, measured power −59 dBm:
/// 02 01 06                 Flags 0x06
/// 1A FF 4C 00              Manufacturer Specific Data, 25 octets, Apple
/// 02 15                    iBeacon type, 21 octets follow
/// E2 … E0                  proximity UUID, big-endian
/// 00 01  00 02  C5         major, minor (big-endian), measured power
private let beaconBytes: [UInt8] = [0x02, 0x01, 0x06, 0x1A, 0xFF, 0x4C, 0x00, 0x02, 0x15,
                                    0xE2, 0xC5, 0x6D, 0xB5, 0xDF, 0xFB, 0x48, 0xD2,
                                    0xB0, 0x60, 0xD0, 0xF5, 0xA7, 0x10, 0x96, 0xE0,
                                    0x00, 0x01, 0x00, 0x02, 0xC5]
private let beacon = IBeacon(proximityUUID: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 2, measuredPower: -59)

@Suite(.timeLimit(.minutes(1))) struct IBeaconTests {
    @Test func encodesTheAdvertisement() throws {
        #expect(try beacon.advertisingData.encoded() == beaconBytes)
        #expect(beaconBytes.count == 30)
    }

    @Test func decodesTheAdvertisement() throws {
        let data = try AdvertisingData.decode(beaconBytes)
        #expect(IBeacon(advertisingData: data) == beacon)
        #expect(data.flags == .leOnlyGeneralDiscoverable)
    }

    @Test func majorAndMinorAreBigEndian() throws {
        let other = IBeacon(proximityUUID: beacon.proximityUUID, major: 0x1234, minor: 0xABCD, measuredPower: 0)
        #expect(Array(other.manufacturerData.data.suffix(5)) == [0x12, 0x34, 0xAB, 0xCD, 0x00])
    }

    @Test func flagsAreNotRequired() throws {
        let data = try AdvertisingData.decode(Array(beaconBytes.dropFirst(3)))
        #expect(IBeacon(advertisingData: data) == beacon)
    }

    @Test func rejectsOtherManufacturerData() {
        let payload = beacon.manufacturerData.data
        #expect(IBeacon(manufacturerData: .init(companyID: 0x0059, data: payload)) == nil)
        var wrongType = payload
        wrongType[0] = 0x03
        #expect(IBeacon(manufacturerData: .init(companyID: 0x004C, data: wrongType)) == nil)
        #expect(IBeacon(manufacturerData: .init(companyID: 0x004C, data: Array(payload.dropLast()))) == nil)
        #expect(IBeacon(advertisingData: AdvertisingData([.flags(.leOnlyGeneralDiscoverable)])) == nil)
    }
}
