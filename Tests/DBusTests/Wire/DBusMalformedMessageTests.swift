import BluetoothCore
@testable import DBus
import Testing

/// What a hostile or broken peer may send: every case is a typed ``DBusWireError``, never a
/// trap. Offsets refer to the libdbus vector of ``DBusMessageWireTests`` (its body starts at
/// 128: the string at 128, its nul at 138, padding at 139, the boolean at 160, the `as` array's
/// length at 200).
@Suite("D-Bus malformed messages")
struct DBusMalformedMessageTests {
    func vector() throws -> [UInt8] { try hex(DBusMessageWireTests.libdbusCall) }

    func decodeError(_ bytes: [UInt8], fileDescriptors: [DBusFileDescriptor] = []) -> DBusWireError? {
        do {
            _ = try DBusMessage.decode(bytes, fileDescriptors: fileDescriptors)
            return nil
        } catch {
            return error
        }
    }

    /// A message with any header fields and body, as a peer could write it.
    func craft(order: DBusByteOrder = .little, kind: UInt8 = 2, serial: UInt32 = 5, version: UInt8 = 1, fields: [(UInt8, DBusValue)],
               body: [UInt8] = []) throws -> [UInt8] {
        var header = DBusMessageHeader(
            marker: order.marker, kind: kind, flags: 0, version: version, bodyLength: UInt32(body.count), serial: serial,
            fields: .array(of: .struct([.byte, .variant]), fields.map { .struct([.byte($0.0), .variant($0.1)]) })
        )
        var writer = DBusWireWriter(byteOrder: order)
        try header.code(&writer)
        writer.pad(to: 8)
        writer.append(body)
        return writer.bytes
    }

    @Test func everyTruncationIsATypedError() throws {
        let bytes = try vector()
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            #expect(decodeError(prefix) != nil, "prefix of \(length) bytes")
            #expect(try DBusMessage.framedLength(prefix[...]) == (length < 16 ? nil : bytes.count))
        }
    }

    @Test func nonZeroPaddingIsRefused() throws {
        var header = try vector()
        header[41] = 1
        #expect(decodeError(header) == .nonZeroPadding(offset: 41))
        var body = try vector()
        body[139] = 0x20
        #expect(decodeError(body) == .nonZeroPadding(offset: 139))
    }

    @Test func aBooleanIsZeroOrOne() throws {
        var bytes = try vector()
        bytes[160] = 2
        #expect(decodeError(bytes) == .invalidBoolean(2, offset: 160))
    }

    @Test func stringsAreUTF8WithOneTerminatingNul() throws {
        var notUTF8 = try vector()
        notUTF8[134] = 0x41 // "é" is c3 a9; c3 41 is no UTF-8
        #expect(decodeError(notUTF8) == .invalidString(offset: 128, reason: "it is not UTF-8"))
        var unterminated = try vector()
        unterminated[138] = 0x21
        #expect(decodeError(unterminated) == .invalidString(offset: 132, reason: "the string does not end with a nul byte"))
        var interiorNul = try vector()
        interiorNul[135] = 0
        #expect(decodeError(interiorNul) == .invalidString(offset: 132, reason: "the string contains a nul byte"))
    }

    @Test func arrayLengthsAreBounded() throws {
        var tooLong = try vector()
        tooLong.replaceSubrange(200..<204, with: [0x01, 0x00, 0x00, 0x04]) // 2^26 + 1
        #expect(decodeError(tooLong) == .arrayTooLong(1 << 26 + 1))
        var mismatched = try vector()
        mismatched[200] = 0x0F // the elements end at 14 bytes, not 15
        #expect(decodeError(mismatched) != nil)
        var pastTheBody = try vector()
        pastTheBody.replaceSubrange(200..<204, with: [0xFF, 0xFF, 0x00, 0x00])
        #expect(decodeError(pastTheBody) == .truncated(offset: 204, needed: 0xFFFF - 40))
    }

    @Test func theFixedHeaderIsChecked() throws {
        var marker = try vector()
        marker[0] = UInt8(ascii: "x")
        #expect(decodeError(marker) == .invalidHeader("the first byte is 120, not \"l\" (little-endian) or \"B\" (big-endian)"))
        #expect(throws: DBusWireError.self) { try DBusMessage.framedLength(marker[...]) }
        var version = try vector()
        version[3] = 2
        #expect(decodeError(version) == .invalidHeader("protocol version 2, not 1"))
        var serial = try vector()
        serial[8] = 0
        #expect(decodeError(serial) == .invalidHeader("the serial is 0"))
        var bodyLength = try vector()
        bodyLength[4] = 0x73
        #expect(decodeError(bodyLength) == .invalidHeader("the body is 116 bytes long, the header says 115"))
        #expect(decodeError(try vector() + [0]) == .invalidHeader("the body is 117 bytes long, the header says 116"))
    }

    @Test func aMessageIsAtMost128MiB() throws {
        var header = try vector()
        header.replaceSubrange(4..<8, with: [0x00, 0x00, 0x00, 0x08]) // a body of 2^27 bytes
        #expect(throws: DBusWireError.messageTooLong(128 + (1 << 27), limit: 1 << 27)) { try DBusMessage.framedLength(header[...]) }
        #expect(throws: DBusWireError.messageTooLong(244, limit: 200)) { try DBusMessage.framedLength(try vector()[...], limit: 200) }
    }

    @Test func headerFieldsAreChecked() throws {
        var wrongType = try vector()
        wrongType[18] = UInt8(ascii: "s") // PATH as a string
        #expect(decodeError(wrongType) == .invalidHeader("header field PATH has type \"s\", not \"o\""))

        var badSignature = try vector()
        badSignature[101] = UInt8(ascii: "z")
        #expect(decodeError(badSignature) == .invalidSignature("zitdbynqxuoasa{si}v", reason: "unknown type code \"z\""))

        let twice = try craft(fields: [(5, .uint32(1)), (5, .uint32(2))])
        #expect(decodeError(twice) == .invalidHeader("header field REPLY_SERIAL appears twice"))

        let noReplySerial = try craft(fields: [])
        #expect(decodeError(noReplySerial) == .invalidHeader("a method return needs the REPLY_SERIAL field"))

        let callWithoutPath = try craft(kind: 1, fields: [(3, .string("Ping"))])
        #expect(decodeError(callWithoutPath) == .invalidHeader("a method call needs the PATH field"))

        let badMember = try craft(kind: 1, fields: [(1, .objectPath(.root)), (3, .string("Not.A.Member"))])
        #expect(decodeError(badMember) == .invalidName(kind: "member name", name: "Not.A.Member"))

        let badSender = try craft(fields: [(5, .uint32(1)), (7, .string("no"))])
        #expect(decodeError(badSender) == .invalidName(kind: "bus name", name: "no"))
    }

    @Test func unknownHeaderFieldsAndMessageTypesAreIgnoredNotRefused() throws {
        let unknownField = try craft(fields: [(5, .uint32(1)), (0x50, .array(of: .string, [.string("future")]))])
        let message = try DBusMessage.decode(unknownField)
        #expect(message.replySerial == 1)
        let unknownType = try DBusMessage.decode(try craft(kind: 9, fields: []))
        #expect(unknownType.kind.rawValue == 9)
    }

    @Test func theBodyFollowsItsSignatureExactly() throws {
        // Signature "u" and 8 bytes of body: 4 are left over.
        let trailing = try craft(fields: [(5, .uint32(1)), (8, .signature(try DBusSignature("u")))], body: [1, 0, 0, 0, 0, 0, 0, 0])
        #expect(decodeError(trailing) == .bodyLengthMismatch(declared: 8, used: 4))
        // A body without a SIGNATURE field must be empty.
        let noSignature = try craft(fields: [(5, .uint32(1))], body: [1, 0, 0, 0])
        #expect(decodeError(noSignature) == .bodyLengthMismatch(declared: 4, used: 0))
    }

    @Test func fileDescriptorsMustHaveComeWithTheMessage() throws {
        let fields: [(UInt8, DBusValue)] = [(5, .uint32(1)), (8, .signature(try DBusSignature("h"))), (9, .uint32(1))]
        let bytes = try craft(fields: fields, body: [0, 0, 0, 0])
        #expect(decodeError(bytes) == .missingFileDescriptors(declared: 1, received: 0))
        let descriptor = DBusFileDescriptor(taking: -1)
        #expect(try DBusMessage.decode(bytes, fileDescriptors: [descriptor]).body == [.unixFD(descriptor)])
        let pastTheCount = try craft(fields: fields, body: [1, 0, 0, 0])
        #expect(decodeError(pastTheCount, fileDescriptors: [descriptor, descriptor]) == .fileDescriptorIndex(1, count: 1))
    }

    @Test func aVariantSignatureHoldsOneCompleteType() throws {
        // <"uu" ...>: two types in one variant.
        let fields: [(UInt8, DBusValue)] = [(5, .uint32(1)), (8, .signature(try DBusSignature("v")))]
        let bytes = try craft(fields: fields, body: [0x02, 0x75, 0x75, 0x00, 1, 0, 0, 0, 2, 0, 0, 0])
        #expect(decodeError(bytes) == .invalidSignature("uu", reason: "a variant holds exactly one complete type"))
        let empty = try craft(fields: fields, body: [0x00, 0x00])
        #expect(decodeError(empty) == .invalidSignature("", reason: "a variant holds exactly one complete type"))
    }
}
