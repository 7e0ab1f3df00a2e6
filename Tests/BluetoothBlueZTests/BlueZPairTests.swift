@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
@testable import DBus
import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// BlueZ 5.66 can drop its answer to `Device1.Pair` (a bonding that completes during its own
/// service discovery; see `BlueZConnection.pair`). Here a bluetoothd that never answers Pair
/// stands in for it: `pair()` must still end, on `Paired`, on the link's loss, or when cancelled.
@Suite("BlueZ: pairing when bluetoothd never answers Pair", .timeLimit(.minutes(1)))
struct BlueZPairTests {
    static let path = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_07")
    static let address = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_07), type: .random)

    /// A central whose bus is `bluetoothd`, with one connected, unpaired device.
    private static func device(served bluetoothd: WithholdingBluetoothd, clock: BluetoothClock = .continuous) async throws -> ConnectedDevice {
        var options = DBusConnection.Options()
        options.isBus = false
        let bus = try await DBusConnection.connect(to: bluetoothd.address, options: options)
        return ConnectedDevice(path, peer: address, properties: [
            "Address": .variant(.string("C0:00:00:00:00:07")), "AddressType": .variant(.string("random")), "Paired": .variant(.boolean(false)),
        ], bus: bus, clock: clock)
    }

    /// pair() under way, with bluetoothd holding its Pair call.
    struct UnansweredPairing {
        let bluetoothd: WithholdingBluetoothd
        let device: ConnectedDevice
        let pairing: Task<LinkSecurity, any Error>
        /// What bluetoothd is called with next.
        var calls: AsyncStream<String>.Iterator
    }

    private static func unansweredPairing(bluetoothd: WithholdingBluetoothd? = nil, clock: BluetoothClock = .continuous) async throws -> UnansweredPairing {
        let bluetoothd = try bluetoothd ?? WithholdingBluetoothd()
        let device = try await Self.device(served: bluetoothd, clock: clock)
        let link = device.link
        let pairing = Task { try await link.pair(authenticated: false) }
        var calls = bluetoothd.calls.makeAsyncIterator()
        #expect(await calls.next() == "Device1.Pair")
        return UnansweredPairing(bluetoothd: bluetoothd, device: device, pairing: pairing, calls: calls)
    }

    @Test("Paired turning true ends pair(), and the device is trusted, with Pair still unanswered")
    func pairedWithoutAnswer() async throws {
        var started = try await Self.unansweredPairing()
        started.device.changed(["Paired": .boolean(true)])
        let security = try await started.pairing.value
        #expect(security.isEncrypted)
        #expect(await started.calls.next() == "Properties.Set Trusted")
        #expect(started.bluetoothd.unanswered.withLock { $0 } == ["Device1.Pair"])
        withExtendedLifetime(started) {}
    }

    @Test("The link lost while BlueZ has not answered Pair: pair() throws disconnected, once BlueZ's answer is not in within the grace")
    func linkLost() async throws {
        let clock = ManualClock()
        let started = try await Self.unansweredPairing(clock: .manual(clock))
        let (device, link, pairing) = (started.device, started.device.link, started.pairing)
        device.changed(["Connected": .boolean(false)])
        try await clock.waitForSleepingTasks()
        #expect(clock.nextDeadline == BlueZConnection.pairAnswerGrace, "waiting for BlueZ's answer")
        clock.advance(by: BlueZConnection.pairAnswerGrace)
        await #expect {
            _ = try await pairing.value
        } throws: { error in
            if case .disconnected = error as? HostError { return true }
            return false
        }
        withExtendedLifetime(device) { #expect(!link.isConnected) }
    }

    /// A wrong passkey: the kernel ends the link as the pairing fails, and BlueZ answers Pair
    /// with AuthenticationFailed just after it says the link ended. The answer is what pair()
    /// throws (the central's clock never moves here: the grace cannot run out first).
    @Test("The link lost, then BlueZ's answer to Pair: pair() throws that answer, not disconnected")
    func linkLostThenAnswered() async throws {
        let clock = ManualClock()
        let bluetoothd = try WithholdingBluetoothd(answeringPairAfter: .milliseconds(200), with: "org.bluez.Error.AuthenticationFailed")
        let started = try await Self.unansweredPairing(bluetoothd: bluetoothd, clock: .manual(clock))
        let (device, pairing) = (started.device, started.pairing)
        device.changed(["Connected": .boolean(false)])
        await #expect {
            _ = try await pairing.value
        } throws: { error in
            guard case let BlueZError.refused(_, name, _)? = error as? BlueZError else { return false }
            return name == "org.bluez.Error.AuthenticationFailed"
        }
        withExtendedLifetime(device) {}
    }

    @Test("Cancelling pair() while BlueZ has not answered Pair ends it; the link stays up")
    func cancelled() async throws {
        let started = try await Self.unansweredPairing()
        let (device, link, pairing) = (started.device, started.device.link, started.pairing)
        pairing.cancel()
        await #expect(throws: (any Error).self) { _ = try await pairing.value }
        withExtendedLifetime(device) {
            #expect(link.isConnected)
            #expect(!link.security.isEncrypted, "the tree still says not paired")
        }
    }
}

/// The far end of a peer-to-peer D-Bus connection playing bluetoothd: it answers every method
/// call with an empty return, except `Device1.Pair`, which it never answers, or answers with an
/// error some time later. Its blocking socket work runs on a thread of its own; a read waits at
/// most 20 s, then it hangs up.
final class WithholdingBluetoothd: Sendable {
    let address: String
    /// Each call received, as "Interface-suffix.Member" (and a Set's property name).
    let calls: AsyncStream<String>
    /// The calls left unanswered.
    let unanswered = Mutex<[String]>([])
    private let directory: URL

    /// Held `GetManagedObjects` answers go out one per ``releaseManagedObjects()``.
    private let managedObjectsReleases = DispatchSemaphore(value: 0)

    /// `answeringPairAfter`: answer Pair with the error `errorName` that long after it came.
    /// `managedObjects`: what `GetManagedObjects` answers (`nil`: an error); `holdingManagedObjects`:
    /// only once the test calls ``releaseManagedObjects()``.
    init(answeringPairAfter delay: Duration? = nil, with errorName: String = "org.bluez.Error.Failed",
         managedObjects: [DBusObjectPath: [String: [String: DBusValue]]]? = [:], holdingManagedObjects: Bool = false) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-bluetoothd-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("socket").path
        address = "unix:path=\(path)"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var socketAddress = sockaddr_un()
        socketAddress.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &socketAddress.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard listener >= 0, bound == 0, listen(listener, 1) == 0 else {
            if listener >= 0 { Glibc.close(listener) }
            throw PeerError("cannot listen on \(path)")
        }
        let (calls, continuation) = AsyncStream.makeStream(of: String.self)
        self.calls = calls
        Thread { [self] in
            defer { continuation.finish() }
            var session = Session(listener: listener)
            defer { session.close() }
            guard (try? session.acceptAndAuthenticate()) != nil else { return }
            var serial: UInt32 = 0
            while let call = try? session.readMessage() {
                guard call.kind == .methodCall else { continue }
                let interface = call.interface?.split(separator: ".").last.map(String.init) ?? "?"
                var name = "\(interface).\(call.member ?? "?")"
                if call.member == "Set", call.body.count > 1, let property = call.body[1].stringValue { name += " \(property)" }
                var reply: DBusMessage?
                if call.member == "Pair" {
                    // Said before any answer: the test acts while bluetoothd holds the call.
                    continuation.yield(name)
                    guard let delay else {
                        self.unanswered.withLock { $0.append(name) }
                        continue
                    }
                    Thread.sleep(forTimeInterval: delay / .seconds(1))
                    reply = DBusMessage.error(to: call, name: DBusErrorName(rawValue: errorName), message: "Authentication Failed")
                } else if call.member == "GetManagedObjects" {
                    if holdingManagedObjects {
                        continuation.yield(name)
                        managedObjectsReleases.wait()
                    }
                    if let managedObjects {
                        reply = DBusMessage.methodReturn(to: call, body: [DBusValue(managedObjects)])
                    } else {
                        reply = DBusMessage.error(to: call, name: DBusErrorName(rawValue: "org.freedesktop.DBus.Error.Failed"), message: "refused")
                    }
                } else if !call.flags.contains(.noReplyExpected) {
                    reply = DBusMessage.methodReturn(to: call)
                }
                if var reply {
                    serial += 1
                    reply.serial = serial
                    guard (try? session.write(reply)) != nil else { return }
                }
                if call.member != "Pair", !(holdingManagedObjects && call.member == "GetManagedObjects") { continuation.yield(name) }
            }
        }.start()
    }

    /// Lets one held `GetManagedObjects` answer go.
    func releaseManagedObjects() { managedObjectsReleases.signal() }

    deinit { try? FileManager.default.removeItem(at: directory) }

    struct PeerError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The accepted connection, read and written with blocking calls.
    private struct Session {
        let listener: Int32
        var connection: Int32 = -1
        var buffer: [UInt8] = []

        init(listener: Int32) { self.listener = listener }

        mutating func close() {
            if connection >= 0 { Glibc.close(connection) }
            Glibc.close(listener)
        }

        /// The server's side of SASL: any AUTH is accepted, file descriptors are agreed to.
        mutating func acceptAndAuthenticate() throws {
            var pollDescriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 20_000) == 1 else { throw PeerError("no client connected") }
            connection = accept(listener, nil, nil)
            guard connection >= 0, try read(1) == [0] else { throw PeerError("no client, or no nul byte first") }
            while true {
                let line = try readLine()
                switch line.prefix(while: { $0 != " " }) {
                case "BEGIN": return
                case "AUTH": try write(Array("OK 0123456789abcdef0123456789abcdef\r\n".utf8))
                case "NEGOTIATE_UNIX_FD": try write(Array("AGREE_UNIX_FD\r\n".utf8))
                default: try write(Array("ERROR\r\n".utf8))
                }
            }
        }

        mutating func readMessage() throws -> DBusMessage {
            while true {
                if let length = try DBusMessage.framedLength(buffer[...]), buffer.count >= length {
                    defer { buffer.removeFirst(length) }
                    return try DBusMessage.decode(Array(buffer[..<length]))
                }
                buffer += try readSome()
            }
        }

        func write(_ message: DBusMessage) throws { try write(message.encode().bytes) }

        private func write(_ bytes: [UInt8]) throws {
            let written = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written == bytes.count else { throw PeerError("write failed") }
        }

        private func readSome() throws -> [UInt8] {
            var pollDescriptor = pollfd(fd: connection, events: Int16(POLLIN), revents: 0)
            guard poll(&pollDescriptor, 1, 20_000) == 1 else { throw PeerError("the client sent nothing for 20 s") }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { throw PeerError("the client closed the connection") }
            return Array(chunk[..<count])
        }

        private mutating func read(_ count: Int) throws -> [UInt8] {
            while buffer.count < count { buffer += try readSome() }
            defer { buffer.removeFirst(count) }
            return Array(buffer[..<count])
        }

        private mutating func readLine() throws -> String {
            while true {
                if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[..<end].filter { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
                    buffer.removeFirst(end + 1)
                    return line
                }
                buffer += try readSome()
            }
        }
    }
}
