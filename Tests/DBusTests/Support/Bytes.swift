import BluetoothCore
import Testing

/// Bytes from hex text with spaces for readability; a malformed vector fails the test.
func hex(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [UInt8] {
    try #require(Hex.decode(text), "malformed hex vector", sourceLocation: sourceLocation)
}
