import CLibFuzzer
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs libFuzzer with this process's arguments (libFuzzer flags, corpus directories or
/// inputs to replay), calls `target` for each input, and exits with libFuzzer's status.
///
/// Each fuzz target's `main.swift` is `runFuzzer { input in ... }`: SwiftPM gives every
/// executable a `main` of its own, so the target hands control to libFuzzer's driver
/// (`LLVMFuzzerRunDriver`) rather than linking libFuzzer's `main`.
public func runFuzzer(_ target: @escaping (inout FuzzInput) -> Void) -> Never {
    currentTarget = target
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    let status = LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        var input = size > 0 && data != nil ? FuzzInput(data.unsafelyUnwrapped, size) : FuzzInput([])
        currentTarget?(&input)
        return 0
    }
    exit(status)
}

/// Set once, before libFuzzer runs, which calls the target on its own thread only.
nonisolated(unsafe) private var currentTarget: ((inout FuzzInput) -> Void)?

/// libFuzzer's entry point, for the `main` in libFuzzer's archive, which the linker may pick up
/// (only ``runFuzzer(_:)`` sets a target; without one, inputs are ignored).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = size > 0 && data != nil ? FuzzInput(data.unsafelyUnwrapped, size) : FuzzInput([])
    currentTarget?(&input)
    return 0
}
