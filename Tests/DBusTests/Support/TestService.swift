@testable import DBus
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Holds handlers until the test releases them (or their task is cancelled), and counts those
/// waiting, so a test can wait until a call is being handled.
final class Gate: Sendable {
    private let state = Mutex<(waiting: [UInt64: CheckedContinuation<Void, any Error>], next: UInt64, cancelled: Int)>(([:], 0, 0))

    var waitingCount: Int { state.withLock { $0.waiting.count } }
    /// Handlers that ended because their task was cancelled.
    var cancelledCount: Int { state.withLock { $0.cancelled } }

    func wait() async throws {
        let identifier = state.withLock { state in
            defer { state.next += 1 }
            return state.next
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiting[identifier] = continuation
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLock { state in
                let continuation = state.waiting.removeValue(forKey: identifier)
                if continuation != nil { state.cancelled += 1 }
                return continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    func releaseAll() {
        let waiting = state.withLock { state in
            defer { state.waiting = [:] }
            return Array(state.waiting.values)
        }
        for continuation in waiting { continuation.resume() }
    }
}

struct SwiftError: Error, CustomStringConvertible {
    var description: String { "a Swift error" }
}

/// The exported object of the call tests: methods for each kind of answer.
enum TestService {
    static let name = "org.example.Test"

    static func interface(gate: Gate = Gate()) -> DBusInterface {
        DBusInterface(name, methods: [
            DBusMethod("Echo", inputs: [.init("text", .string)], outputs: [.init("text", .string)]) { call in call.arguments },
            DBusMethod("Add", inputs: [.init("a", .int32), .init("b", .int32)], outputs: [.init("sum", .int32)]) { call in
                [.int32((call.arguments[0].int32Value ?? 0) &+ (call.arguments[1].int32Value ?? 0))]
            },
            DBusMethod("Fail", inputs: [.init("name", .string), .init("message", .string)]) { call in
                throw DBusError.errorReply(name: DBusErrorName(call.arguments[0].stringValue ?? ""), message: call.arguments[1].stringValue ?? "")
            },
            DBusMethod("Crash") { _ in throw SwiftError() },
            DBusMethod("Hang") { _ in
                try await gate.wait()
                return []
            },
            DBusMethod("WrongOutput", outputs: [.init(nil, .uint32)]) { _ in [.string("not a u")] },
            DBusMethod("Sum", inputs: [.init("data", .array(.byte))], outputs: [.init("length", .uint32), .init("sum", .uint64)]) { call in
                let bytes = call.arguments[0].bytesValue ?? []
                return [.uint32(UInt32(bytes.count)), .uint64(bytes.reduce(0) { $0 &+ UInt64($1) })]
            },
            DBusMethod("Make", inputs: [.init("length", .uint32)], outputs: [.init("data", .array(.byte))]) { call in
                let length = Int(call.arguments[0].uint32Value ?? 0)
                return [.bytes((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })]
            },
            DBusMethod("WriteTo", inputs: [.init("fd", .unixFD), .init("text", .string)]) { call in
                guard let descriptor = call.arguments[0].fileDescriptor?.descriptor else {
                    throw DBusError.errorReply(name: .invalidArgs, message: "no descriptor")
                }
                let bytes = Array((call.arguments[1].stringValue ?? "").utf8)
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                guard written == bytes.count else { throw DBusError.errorReply(name: .ioError, message: "write: \(errno)") }
                return []
            },
            DBusMethod("OpenPipe", inputs: [.init("text", .string)], outputs: [.init("fd", .unixFD)]) { call in
                let (read, write) = try makePipe()
                let bytes = Array((call.arguments[0].stringValue ?? "").utf8)
                _ = bytes.withUnsafeBytes { Glibc.write(write, $0.baseAddress, $0.count) }
                close(write)
                return [.unixFD(DBusFileDescriptor(taking: read))]
            },
        ], signals: [DBusSignalDeclaration("Fired", arguments: [.init("what", .string)])])
    }
}

/// A pipe's two ends, close-on-exec.
func makePipe() throws -> (read: Int32, write: Int32) {
    var descriptors: [Int32] = [-1, -1]
    guard pipe(&descriptors) == 0 else { throw DBusError.systemCallFailed("pipe", errno: errno) }
    for descriptor in descriptors { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    return (descriptors[0], descriptors[1])
}

/// Everything readable from `descriptor` until its writer closes it (blocking; a pipe).
func readAll(_ descriptor: Int32) -> [UInt8] {
    var result: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count <= 0 { return result }
        result += buffer[..<count]
    }
}
