import BluetoothCore
import Foundation

/// Fixed-width integers travel little-endian, as every multi-octet field of the Bluetooth
/// specifications does (Core 6.0, Vol 3, Part F, 3.2.9 and the GATT characteristic
/// definitions). `Int` and `UInt` deliberately do not conform: their width depends on the
/// platform, and a characteristic's never does.
public protocol BluetoothFixedWidthInteger: FixedWidthInteger, Receivable, Transmittable {}

extension BluetoothFixedWidthInteger {
    /// Reads exactly `MemoryLayout<Self>.size` bytes, little-endian.
    public init(bluetoothData: Data) throws {
        let width = MemoryLayout<Self>.size
        guard bluetoothData.count == width else {
            throw BluejayError.deserializationFailed(
                type: String(describing: Self.self), data: bluetoothData,
                reason: "expected \(width) byte\(width == 1 ? "" : "s"), got \(bluetoothData.count)")
        }
        self = ByteReader.integer(littleEndian: bluetoothData)
    }

    /// The value's bytes, little-endian.
    public func toBluetoothData() -> Data { Data(ByteWriter.littleEndianBytes(of: self)) }
}

extension Int8: BluetoothFixedWidthInteger {}
extension Int16: BluetoothFixedWidthInteger {}
extension Int32: BluetoothFixedWidthInteger {}
extension Int64: BluetoothFixedWidthInteger {}
extension UInt8: BluetoothFixedWidthInteger {}
extension UInt16: BluetoothFixedWidthInteger {}
extension UInt32: BluetoothFixedWidthInteger {}
extension UInt64: BluetoothFixedWidthInteger {}

extension Data: Receivable, Transmittable {
    /// The bytes as they are.
    public init(bluetoothData: Data) throws { self = bluetoothData }
    public func toBluetoothData() -> Data { self }
}

extension String: Receivable, Transmittable {
    /// UTF-8 text; bytes that are not UTF-8 throw ``BluejayError/deserializationFailed(type:data:reason:)``.
    public init(bluetoothData: Data) throws {
        guard let text = String(data: bluetoothData, encoding: .utf8) else {
            throw BluejayError.deserializationFailed(type: "String", data: bluetoothData, reason: "not UTF-8")
        }
        self = text
    }

    /// UTF-8 bytes, no terminator.
    public func toBluetoothData() -> Data { Data(utf8) }
}
