/// The characteristic properties bit field of a characteristic declaration
/// (Core 6.0, Vol 3, Part G, 3.3.1.1): the one option set for them, which the GATT client
/// discovers, the GATT server declares and the profiles (GATTProfiles) name.
public struct CharacteristicProperties: OptionSet, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 0x01)
    public static let read = CharacteristicProperties(rawValue: 0x02)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 0x04)
    public static let write = CharacteristicProperties(rawValue: 0x08)
    public static let notify = CharacteristicProperties(rawValue: 0x10)
    public static let indicate = CharacteristicProperties(rawValue: 0x20)
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 0x40)
    public static let extendedProperties = CharacteristicProperties(rawValue: 0x80)

    private static let names: [(CharacteristicProperties, String)] = [
        (.broadcast, "broadcast"), (.read, "read"), (.writeWithoutResponse, "write-without-response"),
        (.write, "write"), (.notify, "notify"), (.indicate, "indicate"),
        (.authenticatedSignedWrites, "signed-write"), (.extendedProperties, "extended"),
    ]

    /// The property names, e.g. `["read", "notify"]`.
    public var names: [String] { Self.names.filter { contains($0.0) }.map(\.1) }
    public var description: String { names.joined(separator: ",") }
}
