/// Reads a fuzzer's input as a sequence of choices: bytes, small numbers, and length-prefixed
/// chunks. Reading past the end gives zeros and empty chunks, so a target never needs to
/// check the length itself and every input, however short, is a valid one.
public struct FuzzInput: Sendable {
    public private(set) var bytes: ArraySlice<UInt8>

    public init(_ bytes: [UInt8]) { self.bytes = bytes[...] }

    /// The input libFuzzer hands `LLVMFuzzerTestOneInput`.
    public init(_ data: UnsafePointer<UInt8>, _ size: Int) {
        self.init(Array(UnsafeBufferPointer(start: data, count: size)))
    }

    public var isAtEnd: Bool { bytes.isEmpty }
    public var remainingCount: Int { bytes.count }

    public mutating func byte() -> UInt8 {
        guard let first = bytes.popFirst() else { return 0 }
        return first
    }

    public mutating func bool() -> Bool { byte() & 1 == 1 }

    public mutating func uint16() -> UInt16 { UInt16(byte()) | UInt16(byte()) << 8 }

    /// A number in `0..<count` (0 when `count` is 0).
    public mutating func index(_ count: Int) -> Int {
        guard count > 0 else { return 0 }
        return Int(uint16()) % count
    }

    /// Up to `count` bytes (fewer at the end of the input).
    public mutating func take(_ count: Int) -> [UInt8] {
        let taken = Array(bytes.prefix(max(0, count)))
        bytes = bytes.dropFirst(taken.count)
        return taken
    }

    /// A chunk: one length byte, then that many bytes.
    public mutating func chunk() -> [UInt8] { take(Int(byte())) }

    /// A longer chunk: a two-byte little-endian length, then that many bytes.
    public mutating func longChunk() -> [UInt8] { take(Int(uint16())) }

    /// Everything left.
    public mutating func rest() -> [UInt8] { take(bytes.count) }
}
