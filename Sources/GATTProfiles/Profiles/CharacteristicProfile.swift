import BluetoothCore

/// Everything a profile knows about one characteristic: its configuration and how its
/// value converts to and from text fields. Build one from a type with the factories
/// (``raw(_:)``, ``rawArray(_:)``, ``rawPair(_:)``, ``rawArrayPair(_:)``, ``structured(_:)``,
/// ``string(_:encoding:)``), or with ``init(uuid:name:properties:permissions:initialValue:)``
/// for a characteristic whose values are shown as hexadecimal.
public struct CharacteristicProfile: Sendable, CustomStringConvertible {
    public let uuid: BluetoothUUID
    public let name: String
    public let properties: CharacteristicProperties
    public let permissions: ProfileAttributePermissions
    public let initialValue: [UInt8]?
    /// For enumerated values, the text of every case.
    public let stringValues: [String]
    private let toText: @Sendable ([UInt8]) throws(SerdeError) -> [String: String]
    private let fromText: @Sendable ([String: String]) -> [UInt8]?

    /// A characteristic whose value is shown as one hexadecimal field named after it.
    public init(uuid: BluetoothUUID, name: String, properties: CharacteristicProperties = [.read],
                permissions: ProfileAttributePermissions = .readable, initialValue: [UInt8]? = nil) {
        self.init(uuid: uuid, name: name, properties: properties, permissions: permissions, initialValue: initialValue,
                  stringValues: [],
                  toText: { bytes in [name: Hex.encode(bytes)] },
                  fromText: { fields in fields[name].flatMap(Hex.decode) })
    }

    private init(uuid: BluetoothUUID, name: String, properties: CharacteristicProperties,
                 permissions: ProfileAttributePermissions, initialValue: [UInt8]?, stringValues: [String],
                 toText: @escaping @Sendable ([UInt8]) throws(SerdeError) -> [String: String],
                 fromText: @escaping @Sendable ([String: String]) -> [UInt8]?) {
        self.uuid = uuid
        self.name = name
        self.properties = properties
        self.permissions = permissions
        self.initialValue = initialValue
        self.stringValues = stringValues
        self.toText = toText
        self.fromText = fromText
    }

    /// The value's text fields; throws when the octets do not decode.
    public func stringValue(_ bytes: [UInt8]) throws(SerdeError) -> [String: String] { try toText(bytes) }

    /// The octets for text fields; `nil` when a field is missing or does not parse.
    public func bytes(stringValue: [String: String]) -> [UInt8]? { fromText(stringValue) }

    public var description: String { "\(name) (\(uuid)) [\(properties)]" }

    // MARK: Factories

    /// A characteristic holding one ``RawDeserializable`` value.
    public static func raw<T: RawDeserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
        make(T.self, decode: { bytes throws(SerdeError) in try T.deserialize(bytes) }, encode: { $0.serialize() })
    }

    /// A characteristic holding a ``RawArrayDeserializable`` value.
    public static func rawArray<T: RawArrayDeserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
        make(T.self, decode: { bytes throws(SerdeError) in try T.deserialize(bytes) }, encode: { $0.serialize() })
    }

    /// A characteristic holding a ``RawPairDeserializable`` value.
    public static func rawPair<T: RawPairDeserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
        make(T.self, decode: { bytes throws(SerdeError) in try T.deserialize(bytes) }, encode: { $0.serialize() })
    }

    /// A characteristic holding a ``RawArrayPairDeserializable`` value.
    public static func rawArrayPair<T: RawArrayPairDeserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
        make(T.self, decode: { bytes throws(SerdeError) in try T.deserialize(bytes) }, encode: { $0.serialize() })
    }

    /// A characteristic holding a ``BytesDeserializable`` value.
    public static func structured<T: BytesDeserializable & CharacteristicConfigurable & StringDeserializable>(_ type: T.Type) -> CharacteristicProfile {
        make(T.self, decode: { bytes throws(SerdeError) in try T(bytes: bytes) }, encode: { $0.serialize() })
    }

    /// A characteristic holding text, one field named after the characteristic.
    public static func string<T: CharacteristicConfigurable>(_ type: T.Type, encoding: StringEncoding = .utf8) -> CharacteristicProfile {
        let name = T.name
        return CharacteristicProfile(
            uuid: T.uuid, name: name, properties: T.properties, permissions: T.permissions, initialValue: T.initialValue,
            stringValues: [],
            toText: { bytes throws(SerdeError) in [name: try encoding.decode(bytes)] },
            fromText: { fields in fields[name].flatMap { try? encoding.encode($0) } })
    }

    private static func make<T: CharacteristicConfigurable & StringDeserializable & Sendable>(
        _ type: T.Type, decode: @escaping @Sendable ([UInt8]) throws(SerdeError) -> T, encode: @escaping @Sendable (T) -> [UInt8]
    ) -> CharacteristicProfile {
        CharacteristicProfile(
            uuid: T.uuid, name: T.name, properties: T.properties, permissions: T.permissions, initialValue: T.initialValue,
            stringValues: T.stringValues,
            toText: { bytes throws(SerdeError) in try decode(bytes).stringValue },
            fromText: { fields in T(stringValue: fields).map(encode) })
    }
}
