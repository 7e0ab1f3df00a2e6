import BluetoothCore
@testable import DBus
import Testing

/// Whole messages: a vector written by libdbus, one worked out by hand in big-endian order,
/// round trips, and the header's rules.
@Suite("D-Bus messages on the wire")
struct DBusMessageWireTests {
    /// What `dbus-send --peer=… /org/example/Obj org.example.Iface.Method string:héllo int32:-2
    /// uint64:7 double:1.5 boolean:true byte:9 int16:-3 uint16:4 int64:-5 uint32:6 objpath:/a/b
    /// array:string:x,y dict:string:int32:k,1 variant:int32:42` (libdbus 1.14) wrote to a socket.
    static let libdbusCall = """
        6c010001740000000100000069000000 01016f00100000002f6f72672f6578616d706c652f4f626a0000000000000000
        02017300110000006f72672e6578616d706c652e49666163650000000000000003017300060000004d6574686f640000
        08016700137369746462796e7178756f6173617b73697d76000000000000000006000000 68c3a96c6c6f0000feffffff
        0700000000000000000000000000f83f010000000900fdff0400000000000000fbffffffffffffff0600000004000000
        2f612f62000000000e000000010000007800000001000000790000000c000000010000006b00000001000000016900002a000000
        """.filter { !$0.isWhitespace }

    static func libdbusCallMessage() throws -> DBusMessage {
        DBusMessage(
            kind: .methodCall, serial: 1, path: try DBusObjectPath("/org/example/Obj"), interface: "org.example.Iface", member: "Method",
            body: [
                .string("héllo"), .int32(-2), .uint64(7), .double(1.5), .boolean(true), .byte(9), .int16(-3), .uint16(4), .int64(-5),
                .uint32(6), .objectPath(try DBusObjectPath("/a/b")), .array(of: .string, [.string("x"), .string("y")]),
                DBusValue(["k": Int32(1)]), .variant(.int32(42)),
            ]
        )
    }

    @Test func decodesWhatLibdbusWrote() throws {
        let message = try DBusMessage.decode(try hex(Self.libdbusCall))
        let expected = try Self.libdbusCallMessage()
        #expect(message.kind == .methodCall)
        #expect(message.flags == [])
        #expect(message.serial == 1)
        #expect(message.path == expected.path)
        #expect(message.interface == "org.example.Iface")
        #expect(message.member == "Method")
        #expect(try message.signature.description == "sitdbynqxuoasa{si}v")
        #expect(message.body == expected.body)
    }

    @Test func encodesTheSameBytesAsLibdbus() throws {
        let encoded = try Self.libdbusCallMessage().encode()
        #expect(Hex.encode(encoded.bytes) == Self.libdbusCall)
        #expect(encoded.fileDescriptors.isEmpty)
    }

    /// A method return, serial 2, answering serial 1 with `u` 7, big-endian, worked out by
    /// hand: fields (5, <u 1>) at 16 and (8, <g "u">) at 24, 15 bytes of fields, one byte of
    /// padding to 32, the body.
    static let bigEndianReturn = "42020001 00000004 00000002 0000000f 05017500 00000001 08016700 01750000 00000007"

    @Test func decodesAndEncodesBigEndian() throws {
        let message = try DBusMessage.decode(try hex(Self.bigEndianReturn))
        #expect(message.kind == .methodReturn)
        #expect(message.serial == 2)
        #expect(message.replySerial == 1)
        #expect(message.body == [.uint32(7)])
        let encoded = try message.encode(byteOrder: .big)
        #expect(encoded.bytes == (try hex(Self.bigEndianReturn)))
    }

    @Test(arguments: [DBusByteOrder.little, .big])
    func everyTypeRoundTrips(order: DBusByteOrder) throws {
        let descriptor = DBusFileDescriptor(taking: -1)
        var message = DBusMessage.signal(
            path: try DBusObjectPath("/org/bluez/hci0/dev_C0_FF_EE_00_11_22"), interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            body: try Self.libdbusCallMessage().body + [
                .signature(try DBusSignature("a{sv}")), .unixFD(descriptor), .bytes([]), .array(of: .struct([.byte, .string]), []),
                .struct([.double(-0.25), .array(of: .variant, [.variant(.uint64(.max)), .variant(.bytes([0, 255]))])]),
                DBusValue([DBusObjectPath.root: ["org.bluez.Device1": ["Connected": DBusValue.boolean(true)]]]),
            ]
        )
        message.serial = 0xFFFF_FFFF
        message.sender = ":1.42"
        message.destination = "org.example.Name-1"
        let encoded = try message.encode(byteOrder: order)
        #expect(encoded.bytes.first == (order == .little ? UInt8(ascii: "l") : UInt8(ascii: "B")))
        #expect(encoded.fileDescriptors == [descriptor])
        #expect(try DBusMessage.framedLength(encoded.bytes[...]) == encoded.bytes.count)
        let decoded = try DBusMessage.decode(encoded.bytes, fileDescriptors: encoded.fileDescriptors)
        #expect(decoded.body == message.body)
        #expect(decoded.serial == message.serial)
        #expect(decoded.sender == ":1.42")
        #expect(decoded.destination == "org.example.Name-1")
        #expect(decoded.flags == .noReplyExpected)
        #expect(decoded.path == message.path)
    }

    @Test func requiredHeaderFieldsAreCheckedBeforeSending() {
        var call = DBusMessage(kind: .methodCall, serial: 1, path: .root)
        #expect(throws: DBusWireError.invalidHeader("a method call needs the MEMBER field")) { try call.encode() }
        call.member = "Ping"
        call.serial = 0
        #expect(throws: DBusWireError.invalidHeader("the serial is 0")) { try call.encode() }
        var signal = DBusMessage(kind: .signal, serial: 1, path: .root, member: "Changed")
        #expect(throws: DBusWireError.self) { try signal.encode() }
        signal.interface = "not an interface"
        #expect(throws: DBusWireError.invalidName(kind: "interface name", name: "not an interface")) { try signal.encode() }
        let error = DBusMessage(kind: .error, serial: 1, errorName: "Bad", replySerial: 1)
        #expect(throws: DBusWireError.invalidName(kind: "error name", name: "Bad")) { try error.encode() }
    }

    @Test func namesFollowTheSpecificationsRules() {
        #expect(DBusNames.isInterface("org.bluez.Adapter1"))
        #expect(!DBusNames.isInterface("org"))
        #expect(!DBusNames.isInterface("org..bluez"))
        #expect(!DBusNames.isInterface("org.1bluez"))
        #expect(!DBusNames.isInterface("org.bluez."))
        #expect(!DBusNames.isInterface("org.blue-z"))
        #expect(!DBusNames.isInterface(String(repeating: "a.", count: 128) + "a"))
        #expect(DBusNames.isMember("StartDiscovery"))
        #expect(!DBusNames.isMember("Start.Discovery"))
        #expect(!DBusNames.isMember("1Start"))
        #expect(!DBusNames.isMember(""))
        #expect(DBusNames.isBus(":1.42"))
        #expect(DBusNames.isBus("org.bluez"))
        #expect(DBusNames.isBus("org.example.Name-1"))
        #expect(!DBusNames.isBus("org"))
        #expect(!DBusNames.isBus(":1"))
        #expect(!DBusNames.isBus("org.1example"))
        #expect(DBusObjectPath.isValid("/".utf8))
        #expect(DBusObjectPath.isValid("/org/bluez/hci0".utf8))
        for invalid in ["", "org", "/org/", "//", "/org//bluez", "/org/blue-z", "/é"] {
            #expect(!DBusObjectPath.isValid(invalid.utf8), "\(invalid)")
            #expect(throws: DBusWireError.invalidObjectPath(invalid)) { try DBusObjectPath(invalid) }
        }
    }

    @Test func objectPathsKnowTheirPlaceInTheTree() throws {
        let device = try DBusObjectPath("/org/bluez/hci0/dev_00")
        #expect(device.parent == (try DBusObjectPath("/org/bluez/hci0")))
        #expect((try DBusObjectPath("/org")).parent == .root)
        #expect(DBusObjectPath.root.parent == nil)
        #expect(device.isWithin(try DBusObjectPath("/org/bluez")))
        #expect(device.isWithin(.root))
        #expect(!(try DBusObjectPath("/org/bluez2")).isWithin(try DBusObjectPath("/org/bluez")))
        #expect(try DBusObjectPath.root.appending("org") == (try DBusObjectPath("/org")))
        #expect(throws: DBusWireError.self) { try device.appending("a/b") }
    }

    @Test func decodingArgumentsIntoSwiftTypes() throws {
        let message = DBusMessage(kind: .signal, path: .root, interface: "a.b", member: "C", body: [
            .objectPath(try DBusObjectPath("/x")), DBusValue(["org.bluez.Device1": ["Name": DBusValue.string("n")]]),
        ])
        let (path, interfaces) = try message.decode(DBusObjectPath.self, [String: [String: DBusValue]].self)
        #expect(path.description == "/x")
        #expect(interfaces["org.bluez.Device1"]?["Name"] == .string("n"))
        #expect(throws: DBusError.self) { try message.decode(String.self, [String: [String: DBusValue]].self) }
        #expect(throws: DBusError.self) { try message.decode(DBusObjectPath.self) }
    }
}
