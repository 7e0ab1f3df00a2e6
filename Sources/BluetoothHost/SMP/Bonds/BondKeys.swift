import BluetoothCore

/// The keys one side of a bond distributed (Core 6.0, Vol 3, Part H, 3.6): what the pairing
/// left behind to encrypt, resolve and verify again on a later connection.
///
/// Encoded (`Codable`) with 128-bit keys and `rand` as hexadecimal text, most significant
/// digit first (`"000102…0f"` is the number 0x000102…0f), so no JSON coder's handling of
/// 64- and 128-bit numbers matters.
public struct BondKeys: Sendable, Hashable, Codable {
    /// The Long Term Key (LTK). With LE Secure Connections both sides hold the same one.
    public var longTermKey: UInt128?
    /// The Encrypted Diversifier that, with ``rand``, identifies a legacy pairing's LTK
    /// (Core 6.0, Vol 3, Part H, 2.4.2.3); 0 with LE Secure Connections.
    public var ediv: UInt16
    /// The random number that, with ``ediv``, identifies a legacy pairing's LTK; 0 with LE
    /// Secure Connections.
    public var rand: UInt64
    /// The Identity Resolving Key (IRK) that resolves this side's private addresses.
    public var identityResolvingKey: UInt128?
    /// This side's identity address: public or static random.
    public var identityAddress: DeviceAddress?
    /// The Connection Signature Resolving Key (CSRK) of signed writes.
    public var signatureKey: UInt128?
    /// The next SignCounter of ``signatureKey`` (Core 6.0, Vol 3, Part H, 2.4.5): for this
    /// device's key, the one its next signed write uses; for the peer's, the lowest it accepts
    /// (one above the last verified). 0 when the key is distributed.
    public var signCounter: UInt32

    public init(longTermKey: UInt128? = nil, ediv: UInt16 = 0, rand: UInt64 = 0, identityResolvingKey: UInt128? = nil,
                identityAddress: DeviceAddress? = nil, signatureKey: UInt128? = nil, signCounter: UInt32 = 0) {
        self.longTermKey = longTermKey
        self.ediv = ediv
        self.rand = rand
        self.identityResolvingKey = identityResolvingKey
        self.identityAddress = identityAddress
        self.signatureKey = signatureKey
        self.signCounter = signCounter
    }

    /// No key at all.
    public var isEmpty: Bool { longTermKey == nil && identityResolvingKey == nil && signatureKey == nil }

    private enum CodingKeys: String, CodingKey {
        case longTermKey, ediv, rand, identityResolvingKey, identityAddress, signatureKey, signCounter
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        longTermKey = try Self.decodeKey(container, .longTermKey)
        ediv = try container.decodeIfPresent(UInt16.self, forKey: .ediv) ?? 0
        rand = try container.decodeIfPresent(String.self, forKey: .rand).map { text in
            guard let value = Hex.number(text, digits: 16).map({ UInt64($0) }) else {
                throw DecodingError.dataCorruptedError(forKey: .rand, in: container, debugDescription: "not 16 hexadecimal digits")
            }
            return value
        } ?? 0
        identityResolvingKey = try Self.decodeKey(container, .identityResolvingKey)
        identityAddress = try container.decodeIfPresent(DeviceAddress.self, forKey: .identityAddress)
        signatureKey = try Self.decodeKey(container, .signatureKey)
        signCounter = try container.decodeIfPresent(UInt32.self, forKey: .signCounter) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(longTermKey.map { Hex.digits($0, count: 32, uppercase: false) }, forKey: .longTermKey)
        try container.encode(ediv, forKey: .ediv)
        try container.encode(Hex.digits(UInt128(rand), count: 16, uppercase: false), forKey: .rand)
        try container.encodeIfPresent(identityResolvingKey.map { Hex.digits($0, count: 32, uppercase: false) }, forKey: .identityResolvingKey)
        try container.encodeIfPresent(identityAddress, forKey: .identityAddress)
        try container.encodeIfPresent(signatureKey.map { Hex.digits($0, count: 32, uppercase: false) }, forKey: .signatureKey)
        try container.encode(signCounter, forKey: .signCounter)
    }

    private static func decodeKey(_ container: KeyedDecodingContainer<CodingKeys>, _ key: CodingKeys) throws -> UInt128? {
        guard let text = try container.decodeIfPresent(String.self, forKey: key) else { return nil }
        guard let value = Hex.number(text, digits: 32) else {
            throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "not 32 hexadecimal digits")
        }
        return value
    }
}
