/// Formats protocol values for descriptions: `WireHex.format(0x12, digits: 4)` → `"0x0012"`.
enum WireHex {
    static func format(_ value: some BinaryInteger, digits: Int) -> String {
        let text = String(value, radix: 16, uppercase: true)
        return "0x" + String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
