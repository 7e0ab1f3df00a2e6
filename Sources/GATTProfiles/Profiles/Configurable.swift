import BluetoothCore

/// What a profile says about a service.
///
/// ```swift
/// struct AccelerometerService: ServiceConfigurable {
///     static let uuid: BluetoothUUID = "F000AA10-0451-4000-B000-000000000000"
///     static let name = "TI Accelerometer"
///     static let tag = "TI Sensor Tag"
/// }
/// ```
public protocol ServiceConfigurable {
    static var name: String { get }
    static var uuid: BluetoothUUID { get }
    /// Groups services for display, e.g. the device they come from.
    static var tag: String { get }
}

/// What a profile says about a characteristic: how to create it on a peripheral.
public protocol CharacteristicConfigurable {
    static var name: String { get }
    static var uuid: BluetoothUUID { get }
    static var properties: CharacteristicProperties { get }
    static var permissions: ProfileAttributePermissions { get }
    /// The value a peripheral starts with, if any.
    static var initialValue: [UInt8]? { get }
}

/// A value that converts to and from text fields, for display and for tools that take
/// values as text: `["Battery Level": "87"]`.
public protocol StringDeserializable {
    /// For enumerations, the text of every case; empty otherwise.
    static var stringValues: [String] { get }
    var stringValue: [String: String] { get }
    init?(stringValue: [String: String])
}
