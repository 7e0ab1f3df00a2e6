import Bluejay
import Foundation

/// The Heart Rate Measurement model of the Bluejay README, as an app would write it: the
/// flags octet says whether the rate is 8 or 16 bits wide (Heart Rate Service 1.0, 3.1.1).
public struct HeartRateMeasurement: Receivable, Sendable, Equatable {
    private var flags: UInt8 = 0
    private var measurement8bits: UInt8 = 0
    private var measurement16bits: UInt16 = 0
    public private(set) var isMeasurementIn8bits = true

    public var measurement: Int { isMeasurementIn8bits ? Int(measurement8bits) : Int(measurement16bits) }

    public init(bluetoothData: Data) throws {
        flags = try bluetoothData.extract(start: 0, length: 1)
        isMeasurementIn8bits = (flags & 0b0000_0001) == 0b0000_0000
        if isMeasurementIn8bits {
            measurement8bits = try bluetoothData.extract(start: 1, length: 1)
        } else {
            measurement16bits = try bluetoothData.extract(start: 1, length: 2)
        }
    }
}
