import BluetoothCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Fails the fuzz run: prints what broke, then traps, so that libFuzzer saves the input as a
/// crash artifact. Used for a property that does not hold (a decoder that does not round-trip,
/// a state machine that lost a packet), the same way as a trap in the code under test.
public func fuzzFailure(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError("fuzz property violated: \(message)", file: file, line: line)
}

/// Checks a property of the code under test; see ``fuzzFailure(_:file:line:)``.
public func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                      file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fuzzFailure(message(), file: file, line: line) }
}

/// Hex for messages.
public func fuzzHex(_ bytes: some Collection<UInt8>) -> String { Hex.encode(bytes, separator: " ") }

/// Set `FUZZ_TRACE=1` to see what a target does with an input (when replaying one).
private let tracing = getenv("FUZZ_TRACE") != nil

/// Prints a step of the target when tracing; costs nothing otherwise.
public func fuzzTrace(_ message: @autoclosure () -> String) {
    if tracing { print(message()) }
}
