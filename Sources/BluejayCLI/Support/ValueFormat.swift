import ArgumentParser
import BluetoothCore

/// How `read` prints a value. Integers are little-endian, as GATT characteristics are.
enum ValueFormat: String, ExpressibleByArgument, CaseIterable {
    case hex, utf8, u8, u16, i16, u32

    func format(_ bytes: [UInt8]) throws -> String {
        switch self {
        case .hex: return Hex.encode(bytes)
        case .utf8:
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CLIError.usage("the value \(Hex.encode(bytes)) is not UTF-8 text; use --format hex")
            }
            return text
        case .u8: return String(try integer(bytes, width: 1))
        case .u16: return String(try integer(bytes, width: 2))
        case .i16: return String(Int16(bitPattern: UInt16(try integer(bytes, width: 2))))
        case .u32: return String(try integer(bytes, width: 4))
        }
    }

    private func integer(_ bytes: [UInt8], width: Int) throws -> UInt64 {
        guard bytes.count == width else {
            throw CLIError.usage("the value has \(bytes.count) byte(s) but \(rawValue) needs \(width): \(Hex.encode(bytes))")
        }
        var reader = ByteReader(bytes, context: rawValue)
        return try reader.readLittleEndian(byteCount: width)
    }
}
