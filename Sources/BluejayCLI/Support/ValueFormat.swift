import ArgumentParser
import BluetoothCore
import GATTProfiles

/// How `read` and `listen` print a value: hex, UTF-8 text, or one number of a fixed format
/// (``NumberFormat``: integers little-endian as GATT values are, f32, the health profiles' SFLOAT).
enum ValueFormat: String, ExpressibleByArgument, CaseIterable {
    case hex, utf8, u8, u16, u32, u64, i8, i16, i32, f32, sfloat

    /// The `--format` help: every format with what it is.
    static var help: ArgumentHelp {
        let lines = allCases.map { "\($0.rawValue): \($0.summary)" }
        return ArgumentHelp("How to print the value; integers and floats are little-endian, as GATT values are.",
                            discussion: lines.joined(separator: "\n"))
    }

    var summary: String {
        switch self {
        case .hex: return "the octets in hex (the default)"
        case .utf8: return "UTF-8 text"
        default: return number?.summary ?? rawValue
        }
    }

    private var number: NumberFormat? { NumberFormat(rawValue: rawValue) }

    func format(_ bytes: [UInt8]) throws -> String {
        switch self {
        case .hex: return Hex.encode(bytes)
        case .utf8:
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw CLIError.usage("the value \(Hex.encode(bytes)) is not UTF-8 text; use --format hex")
            }
            return text
        default:
            guard let number else { return Hex.encode(bytes) }
            do {
                return try number.format(bytes)
            } catch {
                throw CLIError.usage("the value has \(bytes.count) byte(s) but \(rawValue) needs \(number.width): \(Hex.encode(bytes))")
            }
        }
    }
}
