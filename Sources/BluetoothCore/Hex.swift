/// Hexadecimal text for bytes and protocol values, as used in logs, descriptions, the CLI and
/// test vectors: the one formatter of the package.
public enum Hex {
    /// A protocol value as `0x` and uppercase digits, padded to `digits`:
    /// `Hex.format(0x12, digits: 4)` → `"0x0012"`, `Hex.format(0x3E)` → `"0x3E"`.
    public static func format(_ value: some BinaryInteger, digits: Int = 0) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
    }

    /// `[0x01, 0xAB]` → `"01ab"`.
    public static func encode(_ bytes: some Sequence<UInt8>, separator: String = "") -> String {
        bytes.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 0x10 ? "0" + digits : digits
        }.joined(separator: separator)
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
