import BluetoothCore

/// Identifies a peripheral across scans and process restarts: its address and address type,
/// with the name when one is known.
///
/// Two identifiers are equal when their addresses and types are; the name is carried along
/// for display and does not take part in equality. ``stringValue`` is the form to store and
/// to pass back to ``init(string:)``.
public struct PeripheralIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    public var address: DeviceAddress
    public var name: String?

    public init(address: DeviceAddress, name: String? = nil) {
        self.address = address.type.base == address.type ? address : DeviceAddress(address.address, type: address.type.base)
        self.name = name
    }

    /// Parses a ``stringValue``: `"C0:FF:EE:00:11:22"` (public) or `"C0:FF:EE:00:11:22/random"`.
    public init?(string: String) {
        guard let address = DeviceAddress(string) else { return nil }
        self.init(address: address)
    }

    /// `"C0:FF:EE:00:11:22/random"`, or just the address for a public one.
    public var stringValue: String { address.description }

    public var description: String {
        name.map { "\($0) (\(stringValue))" } ?? stringValue
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.address == rhs.address }
    public func hash(into hasher: inout Hasher) { hasher.combine(address) }
}
