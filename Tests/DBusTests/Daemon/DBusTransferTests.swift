@testable import DBus
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What travels besides small values: Unix file descriptors both ways, and messages of
/// several MiB, through a private dbus-daemon.
@Suite("D-Bus: file descriptors and large messages (dbus-daemon)", .enabled(if: DBusDaemon.isAvailable, DBusDaemon.unavailableMessage),
       .privateBus(), .timeLimit(.minutes(1)))
struct DBusTransferTests {
    func connections() async throws -> (server: DBusConnection, client: DBusConnection, object: DBusRemoteObject) {
        let daemon = try suiteDaemon()
        let server = try await daemon.connect()
        let client = try await daemon.connect()
        let path = try DBusObjectPath("/org/example/test")
        try await server.export([TestService.interface()], at: path)
        return (server, client, client.object(try #require(server.uniqueName), at: path))
    }

    @Test func aPipeEndSentToThePeerCarriesItsBytesBack() async throws {
        let (server, client, object) = try await connections()
        defer {
            server.close()
            client.close()
        }
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd) }
        // Ours is sent, the peer writes into its copy; ours is closed after, so the pipe ends.
        let descriptor = DBusFileDescriptor(taking: writeEnd)
        try await object.call(TestService.name, "WriteTo", [.unixFD(descriptor), "through the pipe"])
        descriptor.close()
        #expect(String(decoding: readAll(readEnd), as: UTF8.self) == "through the pipe")
    }

    @Test func aPipeEndReceivedFromThePeerIsOursToRead() async throws {
        let (server, client, object) = try await connections()
        defer {
            server.close()
            client.close()
        }
        let reply = try await object.call(TestService.name, "OpenPipe", ["from the peer"])
        let received = try #require(reply.first?.fileDescriptor)
        let descriptor = try #require(received.take())
        defer { close(descriptor) }
        #expect(fcntl(descriptor, F_GETFD) & FD_CLOEXEC != 0)
        #expect(String(decoding: readAll(descriptor), as: UTF8.self) == "from the peer")
        #expect(received.descriptor == nil)
    }

    @Test func severalDescriptorsInOneMessageKeepTheirOrder() async throws {
        let (server, client, _) = try await connections()
        defer {
            server.close()
            client.close()
        }
        let path = try DBusObjectPath("/fds")
        try await server.export([DBusInterface("org.example.Fds", methods: [
            DBusMethod("Tag", inputs: [.init(nil, .array(.unixFD))]) { call in
                // Writes its index into each descriptor, so the caller sees which went where.
                for (index, value) in (call.arguments[0].arrayValue ?? []).enumerated() {
                    guard let descriptor = value.fileDescriptor?.descriptor else { continue }
                    var byte = UInt8(index)
                    _ = write(descriptor, &byte, 1)
                }
                return []
            },
        ])], at: path)
        var pipes: [(read: Int32, write: Int32)] = []
        for _ in 0..<5 { pipes.append(try makePipe()) }
        let descriptors = pipes.map { DBusFileDescriptor(taking: $0.write) }
        try await client.call(destination: server.uniqueName, path: path, interface: "org.example.Fds", member: "Tag",
                              arguments: [.array(of: .unixFD, descriptors.map(DBusValue.unixFD))])
        for descriptor in descriptors { descriptor.close() }
        for (index, pipe) in pipes.enumerated() {
            #expect(readAll(pipe.read) == [UInt8(index)])
            close(pipe.read)
        }
    }

    @Test func aDescriptorClosedRightAfterSendingStillArrives() async throws {
        let daemon = try suiteDaemon()
        let emitter = try await daemon.connect()
        let listener = try await daemon.connect()
        defer {
            emitter.close()
            listener.close()
        }
        var signals = try await listener.signals(matching: DBusMatchRule(sender: emitter.uniqueName, interface: "org.example.Fds"))
            .makeAsyncIterator()
        // 16 MiB first, so the socket is full and the next message waits in the send queue.
        try emitter.emitSignal(path: .root, interface: "org.example.Fds", member: "Big", arguments: [.bytes(Array(repeating: 1, count: 16 << 20))])
        let (readEnd, writeEnd) = try makePipe()
        defer { close(readEnd) }
        let descriptor = DBusFileDescriptor(taking: writeEnd)
        try emitter.emitSignal(path: .root, interface: "org.example.Fds", member: "Fd", arguments: [.unixFD(descriptor)])
        descriptor.close()
        #expect(try await next(&signals, timeout: .seconds(30)).member == "Big")
        let carrying = try await next(&signals, timeout: .seconds(30))
        let received = try #require(carrying.body.first?.fileDescriptor?.take())
        var byte: UInt8 = 42
        #expect(write(received, &byte, 1) == 1)
        close(received)
        #expect(readAll(readEnd) == [42])
    }

    @Test func descriptorsAreRefusedWhereThePeerDidNotAgreeToThem() async throws {
        let daemon = try suiteDaemon()
        var options = DBusConnection.Options()
        options.negotiateUnixFileDescriptors = false
        let connection = try await daemon.connect(options)
        defer { connection.close() }
        #expect(!connection.canPassFileDescriptors)
        let (readEnd, writeEnd) = try makePipe()
        defer {
            close(readEnd)
            close(writeEnd)
        }
        await #expect {
            try await connection.call(destination: connection.uniqueName, path: .root, interface: "org.example.Fds", member: "Tag",
                                      arguments: [.unixFD(try DBusFileDescriptor.duplicating(writeEnd))])
        } throws: { error in
            guard case DBusError.unsupported = error else { return false }
            return true
        }
    }

    @Test func messagesOfSeveralMiBTravelBothWays() async throws {
        let (server, client, object) = try await connections()
        defer {
            server.close()
            client.close()
        }
        let length = 6 << 20
        let data = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let sum = data.reduce(UInt64(0)) { $0 &+ UInt64($1) }
        #expect(try await object.call(TestService.name, "Sum", [.bytes(data)]) == [.uint32(UInt32(length)), .uint64(sum)])
        let made = try await object.call(TestService.name, "Make", [.uint32(UInt32(length))])
        let bytes = try #require(made.first?.bytesValue)
        #expect(bytes.count == length)
        #expect(bytes == (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    }

    @Test func aMessageLongerThanTheReceiveLimitClosesTheConnectionWithATypedError() async throws {
        let daemon = try suiteDaemon()
        var options = DBusConnection.Options()
        options.maximumMessageLength = 1 << 20
        let (server, _, _) = try await connections()
        let small = try await daemon.connect(options)
        defer {
            server.close()
            small.close()
        }
        let object = small.object(try #require(server.uniqueName), at: try DBusObjectPath("/org/example/test"))
        await #expect {
            try await object.call(TestService.name, "Make", [.uint32(2 << 20)])
        } throws: { error in
            guard case let DBusError.connectionClosed(reason) = error else { return false }
            return reason.contains("longer than the 1048576-byte limit")
        }
        #expect(!small.isConnected)
    }
}
