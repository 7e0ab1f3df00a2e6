import Foundation

extension Data {
    /// Makes a ``Receivable`` from `length` bytes at `start` (counted from the first byte of
    /// this value, whatever its indices).
    ///
    /// ```swift
    /// let flags: UInt8 = try data.extract(start: 0, length: 1)
    /// let rate: UInt16 = try data.extract(start: 1, length: 2)
    /// ```
    ///
    /// - Throws: ``BluejayError/dataOutOfBounds(start:length:count:)`` when the range is not
    ///   inside the data, and whatever `R(bluetoothData:)` throws (a fixed-width integer
    ///   needs `length` to be its width).
    public func extract<R: Receivable>(start: Int, length: Int) throws -> R {
        guard start >= 0, length >= 0, start <= count, length <= count - start else {
            throw BluejayError.dataOutOfBounds(start: start, length: length, count: count)
        }
        let from = index(startIndex, offsetBy: start)
        let to = index(from, offsetBy: length)
        return try R(bluetoothData: Data(self[from..<to]))
    }
}
