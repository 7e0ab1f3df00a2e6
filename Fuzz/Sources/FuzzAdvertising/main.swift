import BluetoothCore
import BluetoothHCI
// `AdvertisementAssembler` is internal (the host's scan state machine, fed by the transport's
// reader thread): this target drives it directly through `@testable import`, which the
// fuzz build allows (a debug build, where SwiftPM enables testing).
@testable import BluetoothHost
import FuzzSupport

/// Advertising data and the advertisement assembler, as any advertiser in range feeds them:
/// AD structures (Core 6.0, Vol 3, Part C, 11) decode without trapping, leniently to the
/// structures before the first malformed one, and every typed field re-encodes to a structure
/// that decodes to the same field; the assembler, fed legacy and extended reports (scan
/// responses, chained data, repeats, duplicate filtering, service filters), never reports an
/// advertisement whose data is longer than an advertiser can send (1,650 octets, Vol 4,
/// Part E, 7.8.54), nor one the service filter excludes.
///
/// Input: an options byte, then reports: a control byte (legacy or extended, event type, data
/// status), a peer byte, a repeat count and a data chunk each.
let filterServices: [BluetoothUUID] = [BluetoothUUID(UInt16(0x180D)), "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"]
/// The longest advertising data an advertiser can have (Core 6.0, Vol 4, Part E, 7.8.54).
let maximumAdvertisingDataLength = 1650

func check(_ advertisement: Advertisement, filtered: Bool) {
    fuzzCheck(advertisement.advertisingData.encodedLength <= maximumAdvertisingDataLength,
              "an advertisement with \(advertisement.advertisingData.encodedLength) octets of data")
    fuzzCheck((advertisement.scanResponse?.encodedLength ?? 0) <= maximumAdvertisingDataLength,
              "a scan response with \(advertisement.scanResponse?.encodedLength ?? 0) octets of data")
    if filtered {
        fuzzCheck(advertisement.serviceUUIDs.contains(where: filterServices.contains), "\(advertisement) passed the service filter")
    }
    _ = advertisement.description
    _ = advertisement.localName
    _ = advertisement.txPowerLevel
    _ = advertisement.identifier.description
}

/// Decoding is strict or lenient, never a trap, and typed fields round-trip.
func checkData(_ bytes: [UInt8]) {
    let lenient = AdvertisingData.decodeLeniently(bytes)
    if let strict = try? AdvertisingData.decode(bytes) {
        fuzzCheck(strict == lenient, "strict \(strict) and lenient \(lenient) decoding differ on \(fuzzHex(bytes))")
    }
    do {
        let encoded = try lenient.encoded(maximumLength: Int.max)
        fuzzCheck(bytes.starts(with: encoded), "\(lenient) re-encodes as \(fuzzHex(encoded)), not a prefix of \(fuzzHex(bytes))")
        fuzzCheck(AdvertisingData.decodeLeniently(encoded) == lenient, "\(lenient) does not round-trip")
    } catch {
        fuzzFailure("decoded data \(lenient) does not encode: \(error)")
    }
    for structure in lenient.structures {
        let field = ADField(lenient: structure)
        let again = ADField(lenient: field.structure)
        fuzzCheck(again == field, "\(structure) decodes as \(field), which re-encodes as \(field.structure), which decodes as \(again)")
    }
    _ = lenient.description
    _ = lenient.fields.map(\.description)
    _ = (lenient.flags, lenient.serviceUUIDs, lenient.hasCompleteServiceUUIDList, lenient.solicitedServiceUUIDs, lenient.localName)
    _ = (lenient.txPowerLevel, lenient.peripheralConnectionIntervalRange?.min, lenient.serviceData, lenient.publicTargetAddresses)
    _ = (lenient.randomTargetAddresses, lenient.appearance, lenient.advertisingInterval, lenient.leBluetoothDeviceAddress, lenient.leRole)
    _ = (lenient.uri, lenient.allManufacturerData, IBeacon(advertisingData: lenient)?.description)
}

runFuzzer { input in
    let options = input.byte()
    var assembler = AdvertisementAssembler(options: ScanOptions(
        active: true, filterDuplicates: options & 1 == 1, serviceUUIDs: options & 2 == 2 ? filterServices : []))
    while !input.isAtEnd {
        let control = input.byte()
        let peer = input.byte()
        let repeats = 1 + Int(input.byte() % 16)
        let data = input.chunk()
        checkData(data)
        let address = BluetoothAddress(rawValue: 0xC0FFEE000000 | UInt64(peer & 0x7F))
        for _ in 0..<repeats {
            let advertisement: Advertisement?
            if control & 1 == 0 {
                let report = LEAdvertisingReportEvent.Report(
                    eventType: AdvertisingReportEventType(rawValue: (control >> 1) % 5) ?? .advInd,
                    addressType: peer & 0x80 == 0 ? .public : .random, address: address,
                    data: Array(data.prefix(LEAdvertisingReportEvent.maximumDataLength)), rssi: Int8(bitPattern: control))
                advertisement = assembler.receive(report)
            } else {
                let report = LEExtendedAdvertisingReportEvent.Report(
                    eventType: ExtendedAdvertisingEventType(rawValue: UInt16(control >> 1) & 0x1F),
                    dataStatus: AdvertisingDataStatus(rawValue: control >> 6) ?? .incompleteMoreToCome,
                    addressType: peer & 0x80 == 0 ? .public : .random, address: address,
                    advertisingSID: control & 0x20 == 0 ? nil : peer & 0x0F, rssi: nil, data: data)
                advertisement = assembler.receive(report)
            }
            if let advertisement { check(advertisement, filtered: options & 2 == 2) }
        }
    }
}
