import BluetoothCore

/// Text encodings for string characteristic values. GATT strings (format `utf8s`,
/// Assigned Numbers 2.4.1) are UTF-8; the others serve devices that do otherwise.
public enum StringEncoding: String, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case utf8 = "UTF-8"
    case utf16LittleEndian = "UTF-16LE"
    case utf16BigEndian = "UTF-16BE"
    case ascii = "ASCII"
    /// ISO 8859-1: each octet is the Unicode scalar of the same value.
    case isoLatin1 = "ISO-8859-1"

    public var description: String { rawValue }

    /// Decodes text; throws ``SerdeError/invalidText(encoding:)`` when the octets are not
    /// valid in this encoding.
    public func decode(_ bytes: [UInt8]) throws(SerdeError) -> String {
        switch self {
        case .utf8:
            guard let text = String(validating: bytes, as: UTF8.self) else { throw .invalidText(encoding: self) }
            return text
        case .utf16LittleEndian, .utf16BigEndian:
            guard bytes.count % 2 == 0 else { throw .invalidText(encoding: self) }
            // Code units are read little-endian; UTF-16BE's are the same with their bytes swapped.
            let units = stride(from: 0, to: bytes.count, by: 2).compactMap { index -> UInt16? in
                let unit = ByteReader.uint16(in: bytes[...], at: index)
                return self == .utf16LittleEndian ? unit : unit?.byteSwapped
            }
            guard let text = String(validating: units, as: UTF16.self) else { throw .invalidText(encoding: self) }
            return text
        case .ascii:
            guard bytes.allSatisfy({ $0 < 0x80 }) else { throw .invalidText(encoding: self) }
            return String(decoding: bytes, as: UTF8.self)
        case .isoLatin1:
            var text = ""
            text.unicodeScalars.append(contentsOf: bytes.map { Unicode.Scalar($0) })
            return text
        }
    }

    /// Encodes text; throws ``SerdeError/unencodable(encoding:)`` when a character has no
    /// representation in this encoding.
    public func encode(_ text: String) throws(SerdeError) -> [UInt8] {
        switch self {
        case .utf8:
            return Array(text.utf8)
        case .utf16LittleEndian, .utf16BigEndian:
            var writer = ByteWriter(capacity: 2 * text.utf16.count)
            for unit in text.utf16 { writer.write(self == .utf16LittleEndian ? unit : unit.byteSwapped) }
            return writer.bytes
        case .ascii:
            guard text.unicodeScalars.allSatisfy({ $0.value < 0x80 }) else { throw .unencodable(encoding: self) }
            return text.unicodeScalars.map { UInt8($0.value) }
        case .isoLatin1:
            guard text.unicodeScalars.allSatisfy({ $0.value < 0x100 }) else { throw .unencodable(encoding: self) }
            return text.unicodeScalars.map { UInt8($0.value) }
        }
    }
}
