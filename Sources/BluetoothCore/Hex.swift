/// Hexadecimal text for bytes and protocol values, as used in logs, descriptions, the CLI and
/// test vectors: the one formatter of the package.
public enum Hex {
    /// A protocol value as `0x` and uppercase digits, padded to `digits`:
    /// `Hex.format(0x12, digits: 4)` → `"0x0012"`, `Hex.format(0x3E)` → `"0x3E"`.
    public static func format(_ value: some BinaryInteger, digits: Int = 0) -> String {
        "0x" + Self.digits(value, count: digits)
    }

    /// A number's digits with no prefix, padded with zeros to `count`:
    /// `Hex.digits(0xAB, count: 4)` → `"00AB"`, `Hex.digits(0xAB, uppercase: false)` → `"ab"`.
    public static func digits(_ value: some BinaryInteger, count: Int = 0, uppercase: Bool = true) -> String {
        let text = String(value, radix: 16, uppercase: uppercase)
        return String(repeating: "0", count: max(0, count - text.count)) + text
    }

    /// The number `text` spells in exactly `digits` hexadecimal digits (either case, no
    /// prefix, at most 32); `nil` for anything else.
    public static func number(_ text: String, digits: Int) -> UInt128? {
        guard digits <= 32, text.utf8.count == digits, text.utf8.allSatisfy(\.isHexDigit) else { return nil }
        return UInt128(text, radix: 16)
    }

    /// `[0x01, 0xAB]` → `"01ab"`.
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        bytes.map { digits($0, count: 2, uppercase: false) }.joined(separator: separator)
    }

    /// Parses `"01ab"`, `"01 AB"`, `"01:ab"` or `"0x01ab"`; returns `nil` for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        var digits = Substring(text)
        if digits.hasPrefix("0x") || digits.hasPrefix("0X") { digits = digits.dropFirst(2) }
        let clean = digits.filter { $0 != " " && $0 != ":" && $0 != "-" }
        guard clean.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(clean.count / 2)
        var index = clean.startIndex
        while index < clean.endIndex {
            let next = clean.index(index, offsetBy: 2)
            guard let byte = UInt8(clean[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        return bytes
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }
}
