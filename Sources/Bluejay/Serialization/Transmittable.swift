import Foundation

/// A value that can be written to a characteristic or descriptor. This is Bluejay's
/// `Sendable`, renamed because Swift's own `Sendable` (safe to share between concurrency
/// domains) has the name.
///
/// ```swift
/// struct Coffee: Transmittable {
///     let strength: UInt8
///     func toBluetoothData() -> Data { Bluejay.combine(sendables: [UInt8(0x01), strength]) }
/// }
/// ```
public protocol Transmittable {
    func toBluetoothData() -> Data
}

/// Zero bytes, for padding a packet built with ``Bluejay/combine(sendables:)``.
public struct DataPadding: Transmittable, Sendable, Equatable {
    /// How many zero bytes.
    public let count: Int

    /// `count` zero bytes; a negative count is treated as zero.
    public init(_ count: Int) {
        self.count = max(0, count)
    }

    public func toBluetoothData() -> Data { Data(count: count) }
}

extension Bluejay {
    /// The bytes of each value, in order: for building packets out of fields.
    ///
    /// ```swift
    /// let packet = Bluejay.combine(sendables: [UInt8(0x3A), UInt16(0x0102), DataPadding(2)])
    /// ```
    public static func combine(sendables: [any Transmittable]) -> Data {
        var data = Data()
        for sendable in sendables { data.append(sendable.toBluetoothData()) }
        return data
    }
}
