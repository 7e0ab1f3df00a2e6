import BluetoothCore
import Foundation

/// Writes results as a readable table or as one JSON object per line.
struct Output {
    let json: Bool

    /// One record: printed as JSON when asked, else as the given line.
    func emit(_ record: [String: JSONValue], line: @autoclosure () -> String) {
        if json {
            print(JSONValue.object(record).encoded)
        } else {
            print(line())
        }
    }

    /// A table with aligned columns (ignored in JSON mode, where rows are emitted one by one).
    func table(header: [String], rows: [[String]]) {
        guard !json else { return }
        let widths = header.indices.map { column in
            ([header[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func format(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        print(format(header))
        rows.forEach { print(format($0)) }
    }

    /// Writes a message to stderr.
    static func error(_ message: String, terminator: String = "\n") {
        FileHandle.standardError.write(Data((message + terminator).utf8))
    }
}

/// A JSON value, encoded with sorted keys on one line.
enum JSONValue: Sendable {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    var encoded: String {
        switch self {
        case let .string(text): return Self.quote(text)
        case let .int(value): return String(value)
        case let .double(value): return value.isFinite ? String(value) : "null"
        case let .bool(value): return value ? "true" : "false"
        case let .array(values): return "[" + values.map(\.encoded).joined(separator: ",") + "]"
        case let .object(fields):
            return "{" + fields.keys.sorted().map { "\(Self.quote($0)):\(fields[$0, default: .null].encoded)" }.joined(separator: ",") + "}"
        case .null: return "null"
        }
    }

    private static func quote(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20: result += String(format: "\\u%04x", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}

extension JSONValue {
    static func hex(_ bytes: [UInt8]) -> JSONValue { .string(Hex.encode(bytes)) }
    static func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
    static func optional(_ value: Int?) -> JSONValue { value.map(JSONValue.int) ?? .null }
}
