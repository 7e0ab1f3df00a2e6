import BluetoothCore

/// Names a GATT service by its UUID, so that a service is never passed where a
/// characteristic is expected.
///
/// ```swift
/// let heartRateService = ServiceIdentifier(uuid: "180D")
/// ```
///
/// A string that is not a UUID does not trap: every operation that uses the identifier
/// fails with ``BluejayError/invalidUUID(_:)``.
public struct ServiceIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The UUID as given.
    public let uuidString: String
    /// The parsed UUID; `nil` when ``uuidString`` is not a Bluetooth UUID.
    public let uuid: BluetoothUUID?

    /// `"180D"`, `"0x180D"` or a 128-bit UUID `"6E400001-B5A3-F393-E0A9-E50E24DCCA9E"`.
    public init(uuid: String) {
        let parsed = BluetoothUUID(uuid)
        self.uuid = parsed
        self.uuidString = parsed?.description ?? uuid
    }

    public init(uuid: BluetoothUUID) {
        self.uuid = uuid
        self.uuidString = uuid.description
    }

    /// The UUID, or ``BluejayError/invalidUUID(_:)``.
    func requireUUID() throws(BluejayError) -> BluetoothUUID {
        guard let uuid else { throw .invalidUUID(uuidString) }
        return uuid
    }

    public var description: String { uuidString }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.uuid != nil ? lhs.uuid == rhs.uuid : lhs.uuidString == rhs.uuidString
    }

    public func hash(into hasher: inout Hasher) {
        if let uuid { hasher.combine(uuid) } else { hasher.combine(uuidString) }
    }

    public init(from decoder: any Decoder) throws {
        self.init(uuid: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuidString)
    }
}
