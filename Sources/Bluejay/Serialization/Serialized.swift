import Foundation
import GATTProfiles

/// Any value of the GATTProfiles serde family (`GATTProfiles/SerdeCodable`: `Deserializable`,
/// `RawDeserializable`, `RawArrayDeserializable`, `RawPairDeserializable`,
/// `RawArrayPairDeserializable`, `BytesDeserializable`) as a ``Receivable`` and ``Transmittable``:
/// the one bridge between BlueCap's serde types and Bluejay's API, so that no type needs a
/// wrapper of its own. The `as:` and `serializing:` forms of read, write and listen use it.
///
/// ```swift
/// let level = try await bluejay.read(from: batteryLevel, as: BatteryProfile.Level.self)
/// try await bluejay.write(to: accelerometerEnabled, serializing: TISensorTag.AccelerometerService.Enabled.yes)
/// let packet = Bluejay.combine(sendables: [UInt8(0x01), Serialized(TISensorTag.AccelerometerService.Enabled.yes)])
/// ```
///
/// Bytes that do not make a value (a wrong length, an invalid raw value) are reported as
/// ``BluejayError/deserializationFailed(type:data:reason:)`` with the `GATTProfiles/SerdeError`.
public struct Serialized<Value: SerdeCodable>: Receivable, Transmittable, Sendable {
    /// The value.
    public var value: Value

    public init(_ value: Value) {
        self.value = value
    }

    public init(bluetoothData: Data) throws {
        value = try Value.decode(serdeBytes: Array(bluetoothData))
    }

    public func toBluetoothData() -> Data { Data(value.serdeBytes()) }
}

extension Serialized: Equatable where Value: Equatable {}
extension Serialized: Hashable where Value: Hashable {}
