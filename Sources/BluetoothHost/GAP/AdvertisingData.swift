import BluetoothCore

/// One AD structure: a Length octet, the AD Type and the AD Data (Core 6.0, Vol 3, Part C, 11).
public struct AdvertisingStructure: Hashable, Sendable, CustomStringConvertible {
    public var type: AdvertisingDataType
    public var data: [UInt8]

    public init(type: AdvertisingDataType, data: [UInt8]) {
        self.type = type
        self.data = data
    }

    /// Length, type, data.
    public var encodedLength: Int { 2 + data.count }

    public var description: String { "\(type.name): \(Hex.encode(data, separator: " "))" }
}

/// Advertising or scan response data: an ordered list of AD structures (Core 6.0, Vol 3,
/// Part C, 11; the data types are in the Core Specification Supplement, Part A, 1).
///
/// Decoding keeps every structure, known or not, in order; the typed accessors
/// (``flags``, ``serviceUUIDs``, ``localName``, …) interpret them. Build data from typed
/// fields with ``init(_:)`` and encode it with ``encoded(maximumLength:)``.
public struct AdvertisingData: Hashable, Sendable, CustomStringConvertible {
    /// The longest legacy advertising or scan response data (Core 6.0, Vol 4, Part E, 7.8.7).
    public static let legacyMaximumLength = 31
    /// The longest extended advertising or scan response data a controller takes (Core 6.0,
    /// Vol 4, Part E, 7.8.57: Max_Advertising_Data_Length is at most 0x0672).
    public static let extendedMaximumLength = 1650

    public var structures: [AdvertisingStructure]

    public init(structures: [AdvertisingStructure] = []) { self.structures = structures }

    /// Data made of typed fields, in the order given.
    public init(_ fields: [ADField]) { self.structures = fields.map(\.structure) }

    /// Decodes advertising data strictly. A zero Length octet ends the significant part and
    /// everything after it is padding (Vol 3, Part C, 11); a structure whose Length runs past
    /// the end of the data throws `PacketDecodingError/truncated(context:needed:available:)`.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> AdvertisingData {
        let (data, error) = parse(bytes)
        if let error { throw error }
        return data
    }

    /// Decodes advertising data as real devices send it: the well-formed structures before
    /// the first malformed one are kept and the rest is dropped.
    public static func decodeLeniently(_ bytes: [UInt8]) -> AdvertisingData {
        parse(bytes).data
    }

    private static func parse(_ bytes: [UInt8]) -> (data: AdvertisingData, error: PacketDecodingError?) {
        var structures: [AdvertisingStructure] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }  // Early termination: the rest is padding.
            let start = offset + 1
            guard start + length <= bytes.count else {
                let error = PacketDecodingError.truncated(context: "AD structure at offset \(offset)", needed: length,
                                                          available: bytes.count - start)
                return (AdvertisingData(structures: structures), error)
            }
            structures.append(AdvertisingStructure(type: AdvertisingDataType(rawValue: bytes[start]),
                                                   data: Array(bytes[(start + 1)..<(start + length)])))
            offset = start + length
        }
        return (AdvertisingData(structures: structures), nil)
    }

    /// The encoded data, with no padding. Throws ``AdvertisingDataError/doesNotFit(needed:available:)``
    /// when it is longer than `maximumLength` (31 for legacy advertising; up to 1650 for
    /// extended advertising, Vol 4, Part E, 7.8.54).
    public func encoded(maximumLength: Int = AdvertisingData.legacyMaximumLength) throws(AdvertisingDataError) -> [UInt8] {
        var writer = ByteWriter(capacity: encodedLength)
        for structure in structures {
            guard structure.data.count <= 254 else {
                throw .structureTooLong(type: structure.type, dataLength: structure.data.count)
            }
            writer.write(UInt8(1 + structure.data.count))
            writer.write(structure.type.rawValue)
            writer.write(contentsOf: structure.data)
        }
        guard writer.bytes.count <= maximumLength else {
            throw .doesNotFit(needed: writer.bytes.count, available: maximumLength)
        }
        return writer.bytes
    }

    /// The number of octets ``encoded(maximumLength:)`` produces.
    public var encodedLength: Int { structures.reduce(0) { $0 + $1.encodedLength } }

    /// An advertisement combined with its scan response: the structures of both, the
    /// advertisement's first, so its values win in the first-match accessors.
    public func merging(scanResponse: AdvertisingData) -> AdvertisingData {
        AdvertisingData(structures: structures + scanResponse.structures)
    }

    /// The fields, typed. A structure of an unknown type, or one whose data is malformed for
    /// its type, is ``ADField/other(type:data:)``.
    public var fields: [ADField] { structures.map(ADField.init(lenient:)) }

    /// The data of the first structure of `type`.
    public func data(for type: AdvertisingDataType) -> [UInt8]? {
        structures.first { $0.type == type }?.data
    }

    public var description: String { "[" + structures.map(\.description).joined(separator: "; ") + "]" }
}
