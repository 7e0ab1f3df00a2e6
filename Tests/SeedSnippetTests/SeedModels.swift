// The seeds' models, as Bluejay 0.8.4's README prints them. The one change a port makes:
// `Sendable` (Bluejay's serialization protocol) is `Transmittable` here.
import Bluejay
import Foundation
import TestSupport

struct HeartRateMeasurement: Receivable {

    private var flags: UInt8 = 0
    private var measurement8bits: UInt8 = 0
    private var measurement16bits: UInt16 = 0
    private var energyExpended: UInt16 = 0
    private var rrInterval: UInt16 = 0

    private var isMeasurementIn8bits = true

    var measurement: Int {
        return isMeasurementIn8bits ? Int(measurement8bits) : Int(measurement16bits)
    }

    init(bluetoothData: Data) throws {
        flags = try bluetoothData.extract(start: 0, length: 1)

        isMeasurementIn8bits = (flags & 0b00000001) == 0b00000000

        if isMeasurementIn8bits {
            measurement8bits = try bluetoothData.extract(start: 1, length: 1)
        } else {
            measurement16bits = try bluetoothData.extract(start: 1, length: 2)
        }
    }
}

enum CoffeeEnum: Int {
    case espresso = 1
    case latte = 2
}

struct Coffee: Transmittable { // port: Sendable → Transmittable

    let data: UInt8

    init(coffee: CoffeeEnum) {
        data = UInt8(coffee.rawValue)
    }

    func toBluetoothData() -> Data {
        return Bluejay.combine(sendables: [data])
    }
}

/// The seeds' authentication answers (their `AuthResponse` is not shown; this is the least
/// that makes the example meaningful).
enum AuthResponse: UInt8 {
    case success = 0
    case failure = 1
}

/// 0.7's `ReadRequest` and `FirmwareVersion` of the writeAndAssemble example (not shown in
/// the seeds either): a request naming a register, and a fixed-length answer.
struct ReadRequest: Transmittable {
    let handle: UInt8
    func toBluetoothData() -> Data { Data([0x52, handle]) } // "R", register
}

struct FirmwareVersion: Receivable {
    static let length = 8
    let string: String
    init(bluetoothData: Data) throws {
        string = String(decoding: bluetoothData, as: UTF8.self)
    }
}

enum Registers {
    enum system {
        static let firmwareVersion: UInt8 = 0x01
    }
}

/// What the seeds print with `debugPrint`, for the tests to check (this module's
/// `debugPrint` shadows the standard library's, so that the snippets stay as printed).
let seedTranscript = AwaitableLog<String>()

func debugPrint(_ text: String) {
    seedTranscript.append(text)
}
