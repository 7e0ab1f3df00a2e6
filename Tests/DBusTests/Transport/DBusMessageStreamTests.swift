@testable import DBus
import Testing

/// The receive side's framing: messages cut from bytes however the reads split them, each
/// with the descriptors it claims.
@Suite("D-Bus message framing")
struct DBusMessageStreamTests {
    static let limits = DBusChannel.Limits(maximumMessageLength: DBusMessage.maximumLength, maximumQueuedBytes: 1 << 20, maximumQueuedDescriptors: 4)

    func messages(_ count: Int) throws -> [UInt8] {
        var bytes: [UInt8] = []
        for serial in 1...count {
            bytes += try DBusMessage(kind: .signal, serial: UInt32(serial), path: .root, interface: "org.example.A", member: "B",
                                     body: [.uint32(UInt32(serial)), .bytes(Array(repeating: 7, count: serial * 10))]).encode().bytes
        }
        return bytes
    }

    @Test(arguments: [1, 3, 7, 64, 100_000])
    func messagesAreCutHoweverTheBytesArrive(chunk: Int) throws {
        let bytes = try messages(5)
        var stream = DBusMessageStream(limits: Self.limits)
        var received: [DBusMessage] = []
        var offset = 0
        while offset < bytes.count {
            let end = min(bytes.count, offset + chunk)
            try stream.append(bytes[offset..<end], fileDescriptors: []) { received.append($0) }
            offset = end
        }
        #expect(received.map(\.serial) == [1, 2, 3, 4, 5])
        #expect(received.map { $0.body.first } == (1...5).map { .uint32(UInt32($0)) })
    }

    @Test func eachMessageTakesTheDescriptorsItClaims() throws {
        let first = DBusFileDescriptor(taking: -1)
        let second = DBusFileDescriptor(taking: -1)
        let third = DBusFileDescriptor(taking: -1)
        let one = try DBusMessage(kind: .signal, serial: 1, path: .root, interface: "a.b", member: "C", body: [.unixFD(first)]).encode()
        let two = try DBusMessage(kind: .signal, serial: 2, path: .root, interface: "a.b", member: "C", body: [.unixFD(second), .unixFD(third)]).encode()
        var stream = DBusMessageStream(limits: Self.limits)
        var received: [DBusMessage] = []
        try stream.append((one.bytes + two.bytes)[...], fileDescriptors: [first, second, third]) { received.append($0) }
        #expect(received.map(\.body) == [[.unixFD(first)], [.unixFD(second), .unixFD(third)]])
    }

    @Test func descriptorsNoMessageClaimsAreBounded() throws {
        var stream = DBusMessageStream(limits: Self.limits)
        let descriptors = (0..<5).map { _ in DBusFileDescriptor(taking: -1) }
        #expect(throws: DBusError.protocolViolation(.tooManyFileDescriptors(5, limit: 4))) {
            try stream.append([][...], fileDescriptors: descriptors) { _ in }
        }
    }

    @Test func aLengthOverTheLimitIsRefusedFromTheFixedHeader() throws {
        var stream = DBusMessageStream(limits: DBusChannel.Limits(maximumMessageLength: 100, maximumQueuedBytes: 1 << 20))
        let bytes = try messages(1)
        #expect(bytes.count > 100)
        #expect(throws: DBusError.protocolViolation(.messageTooLong(bytes.count, limit: 100))) {
            try stream.append(bytes.prefix(16), fileDescriptors: []) { _ in }
        }
    }

    @Test func anAnnouncedLengthIsNotAllocatedBeforeTheBytesArrive() throws {
        // A header announcing a 100 MiB body: the buffer holds what came, not what was announced.
        var stream = DBusMessageStream(limits: Self.limits)
        let header: [UInt8] = [UInt8(ascii: "l"), 2, 0, 1, 0, 0, 0x40, 0x06, 1, 0, 0, 0, 0, 0, 0, 0]
        try stream.append(header[...], fileDescriptors: []) { _ in Issue.record("nothing is complete") }
        #expect(stream.bufferedCapacity < 1 << 20)
    }
}
