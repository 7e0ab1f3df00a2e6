import Foundation

/// A value that can be made from the bytes of a characteristic or descriptor: what
/// `Bluejay/read(from:timeout:completion:)` and ``Bluejay/listen(to:multipleListenOption:completion:)``
/// return.
///
/// ```swift
/// struct HeartRateMeasurement: Receivable {
///     let beatsPerMinute: Int
///     init(bluetoothData: Data) throws {
///         let flags: UInt8 = try bluetoothData.extract(start: 0, length: 1)
///         beatsPerMinute = flags & 0x01 == 0
///             ? Int(try bluetoothData.extract(start: 1, length: 1) as UInt8)
///             : Int(try bluetoothData.extract(start: 1, length: 2) as UInt16)
///     }
/// }
/// ```
///
/// Throw (any error; ``BluejayError`` from `Foundation/Data/extract(start:length:)`) when
/// the bytes do not make a value: Bluejay reports it as
/// ``BluejayError/deserializationFailed(type:data:reason:)`` with the bytes received.
public protocol Receivable: SendableMetatype {
    init(bluetoothData: Data) throws
}
