import DBus
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Interactions with peers we did not write: GLib's `gdbus` calls our exported objects and
/// parses our introspection XML; libdbus's `dbus-send` reads GetManagedObjects and sends a
/// signal we receive.
@Suite("D-Bus: gdbus and dbus-send as peers (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage),
       .enabled(if: Tool.gdbus != nil && Tool.dbusSend != nil, "gdbus or dbus-send is not installed (Debian packages libglib2.0-bin, dbus-bin)"),
       .privateBus(), .timeLimit(.minutes(1)))
struct DBusThirdPartyTests {
    /// A connection exporting the test service and a characteristic-like tree under an object manager.
    func server() async throws -> DBusConnection {
        let daemon = try suiteDaemon()
        let server = try await daemon.connect()
        try await server.export([TestService.interface()], at: try DBusObjectPath("/org/example/test"))
        let root = try DBusObjectPath("/org/example/app")
        try server.addObjectManager(at: root)
        try await server.export([DBusInterface("org.bluez.GattService1", properties: [
            .constant("UUID", "0000180d-0000-1000-8000-00805f9b34fb"), .constant("Primary", true),
        ])], at: try root.appending("service0"))
        return server
    }

    @Test func gdbusCallsOurMethods() async throws {
        let daemon = try suiteDaemon()
        let server = try await server()
        defer { server.close() }
        let name = try #require(server.uniqueName)
        let echo = try await Tool.run(Tool.gdbus, ["call", "--address", daemon.pathAddress, "--dest", name, "--object-path", "/org/example/test",
                                                  "--method", "org.example.Test.Echo", "héllo"])
        #expect(echo.output == "('héllo',)\n", "\(echo)")
        let add = try await Tool.run(Tool.gdbus, ["call", "--address", daemon.pathAddress, "--dest", name, "--object-path", "/org/example/test",
                                                 "--method", "org.example.Test.Add", "40", "2"])
        #expect(add.output == "(42,)\n", "\(add)")
        let failure = try await Tool.run(Tool.gdbus, ["call", "--address", daemon.pathAddress, "--dest", name, "--object-path", "/org/example/test",
                                                     "--method", "org.example.Test.Fail", "org.example.Error.Custom", "told to fail"])
        #expect(failure.status != 0)
        #expect(failure.errors.contains("org.example.Error.Custom"), "\(failure)")
        #expect(failure.errors.contains("told to fail"), "\(failure)")
    }

    @Test func gdbusReadsOurIntrospectionAndProperties() async throws {
        let daemon = try suiteDaemon()
        let server = try await server()
        defer { server.close() }
        let name = try #require(server.uniqueName)
        // gdbus parses the XML and prints it back in its own syntax.
        let introspection = try await Tool.run(Tool.gdbus, ["introspect", "--address", daemon.pathAddress, "--dest", name,
                                                           "--object-path", "/org/example/test"])
        #expect(introspection.status == 0, "\(introspection)")
        #expect(introspection.output.contains("interface org.example.Test {"), "\(introspection)")
        #expect(introspection.output.contains("Add(in  i a,"), "\(introspection)")
        #expect(introspection.output.contains("Fired(s what);"), "\(introspection)")
        let recursive = try await Tool.run(Tool.gdbus, ["introspect", "--address", daemon.pathAddress, "--dest", name, "--object-path", "/",
                                                       "--recurse", "--only-properties"])
        #expect(recursive.output.contains("node /org/example/app/service0 {"), "\(recursive)")
        #expect(recursive.output.contains("readonly s UUID = '0000180d-0000-1000-8000-00805f9b34fb';"), "\(recursive)")
    }

    @Test func dbusSendReadsGetManagedObjects() async throws {
        let daemon = try suiteDaemon()
        let server = try await server()
        defer { server.close() }
        let name = try #require(server.uniqueName)
        let reply = try await Tool.run(Tool.dbusSend, ["--bus=\(daemon.pathAddress)", "--print-reply", "--dest=\(name)", "/org/example/app",
                                                      "org.freedesktop.DBus.ObjectManager.GetManagedObjects"])
        #expect(reply.status == 0, "\(reply)")
        #expect(reply.output.contains("object path \"/org/example/app/service0\""), "\(reply)")
        #expect(reply.output.contains("string \"org.bluez.GattService1\""), "\(reply)")
        #expect(reply.output.contains("boolean true"), "\(reply)")
    }

    @Test func aSignalFromDbusSendReachesOurStream() async throws {
        let daemon = try suiteDaemon()
        let listener = try await daemon.connect()
        defer { listener.close() }
        var signals = try await listener.signals(matching: DBusMatchRule(interface: "org.example.ThirdParty", member: "Fired")).makeAsyncIterator()
        // (gdbus emit --address skips Hello, so the bus drops it: dbus-send is the emitter here.)
        let emit = try await Tool.run(Tool.dbusSend, ["--bus=\(daemon.pathAddress)", "--type=signal", "/org/example/emitter",
                                                     "org.example.ThirdParty.Fired", "string:from dbus-send", "uint32:7", "array:string:a,b"])
        #expect(emit.status == 0, "\(emit)")
        let signal = try await next(&signals)
        #expect(signal.path?.description == "/org/example/emitter")
        #expect(signal.body == ["from dbus-send", .uint32(7), DBusValue(["a", "b"])])
    }
}

/// Runs a command-line tool to its end (at most 20 s), with its output and errors.
enum Tool {
    static let gdbus = find("gdbus")
    static let dbusSend = find("dbus-send")

    static func find(_ name: String) -> String? {
        ["/usr/bin/", "/bin/", "/usr/local/bin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    struct Result: CustomStringConvertible {
        var status: Int32
        var output: String
        var errors: String
        var description: String { "exit \(status), stdout: \(output), stderr: \(errors)" }
    }

    static func run(_ executable: String?, _ arguments: [String]) async throws -> Result {
        let executable = try #require(executable)
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: executable)
                process.arguments = arguments
                let output = Pipe()
                let errors = Pipe()
                process.standardOutput = output
                process.standardError = errors
                process.standardInput = FileHandle.nullDevice
                do {
                    try process.run()
                } catch {
                    continuation.resume(throwing: error)
                    return
                }
                let killer = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
                DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: killer)
                let errorData = ErrorsReader(errors.fileHandleForReading)
                let outputData = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                killer.cancel()
                continuation.resume(returning: Result(status: process.terminationStatus, output: String(decoding: outputData, as: UTF8.self),
                                                      errors: String(decoding: errorData.finish(), as: UTF8.self)))
            }
            thread.start()
        }
    }

    /// Reads stderr on a thread of its own, so neither pipe can fill up and stall the tool.
    private final class ErrorsReader: @unchecked Sendable {
        private var data = Data()
        private let done = DispatchSemaphore(value: 0)

        init(_ handle: FileHandle) {
            Thread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }.start()
        }

        func finish() -> Data {
            done.wait()
            return data
        }
    }
}
