import BluetoothCore

/// Names a characteristic by its UUID and the service that holds it.
///
/// ```swift
/// let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
/// ```
public struct CharacteristicIdentifier: Hashable, Sendable, Codable, CustomStringConvertible {
    public let uuidString: String
    /// The parsed UUID; `nil` when ``uuidString`` is not a Bluetooth UUID.
    public let uuid: BluetoothUUID?
    public let service: ServiceIdentifier

    public init(uuid: String, service: ServiceIdentifier) {
        let parsed = BluetoothUUID(uuid)
        self.uuid = parsed
        self.uuidString = parsed?.description ?? uuid
        self.service = service
    }

    public init(uuid: BluetoothUUID, service: ServiceIdentifier) {
        self.uuid = uuid
        self.uuidString = uuid.description
        self.service = service
    }

    func requireUUID() throws(BluejayError) -> BluetoothUUID {
        guard let uuid else { throw .invalidUUID(uuidString) }
        return uuid
    }

    /// `"2A37 in 180D"`.
    public var description: String { "\(uuidString) in \(service)" }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.service == rhs.service && (lhs.uuid != nil ? lhs.uuid == rhs.uuid : lhs.uuidString == rhs.uuidString)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(service)
        if let uuid { hasher.combine(uuid) } else { hasher.combine(uuidString) }
    }

    private enum CodingKeys: String, CodingKey { case uuid, service }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(uuid: try container.decode(String.self, forKey: .uuid),
                  service: try container.decode(ServiceIdentifier.self, forKey: .service))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(uuidString, forKey: .uuid)
        try container.encode(service, forKey: .service)
    }
}
