@testable import DBus
import Testing

/// The exported tree and its introspection, without a bus.
@Suite("D-Bus exported object tree")
struct DBusObjectTreeTests {
    @Test func managersChildrenAndNodes() throws {
        var tree = DBusObjectTree()
        let app = try DBusObjectPath("/app")
        try tree.add([], at: app)
        tree.addManager(at: app)
        try tree.add([DBusInterface("org.example.S")], at: try DBusObjectPath("/app/s0"))
        try tree.add([DBusInterface("org.example.C")], at: try DBusObjectPath("/app/s0/c0"))
        try tree.add([DBusInterface("org.example.C")], at: try DBusObjectPath("/app/s1/c0"))
        #expect(tree.manager(announcing: try DBusObjectPath("/app/s0/c0")) == app)
        #expect(tree.manager(announcing: app) == nil)
        #expect(tree.objects(below: app).map(\.path.description) == ["/app/s0", "/app/s0/c0", "/app/s1/c0"])
        #expect(tree.childNames(of: .root) == ["app"])
        #expect(tree.childNames(of: app) == ["s0", "s1"])
        #expect(tree.hasNode(at: try DBusObjectPath("/app/s1")))
        #expect(!tree.hasNode(at: try DBusObjectPath("/other")))
        #expect(throws: DBusError.self) { try tree.add([], at: app) }
        #expect(throws: DBusError.self) { try tree.add([DBusInterface("a.b"), DBusInterface("a.b")], at: try DBusObjectPath("/x")) }
        #expect(tree.remove(at: app) != nil)
        #expect(!tree.isManager(app))
    }

    @Test func introspectionEscapesWhatItQuotes() {
        let interface = DBusInterface("org.example.I", methods: [
            DBusMethod("M", inputs: [.init("a\"<&>'", .string)]) { _ in [] },
        ], properties: [DBusProperty("P", type: .array(.dictEntry(key: .string, value: .variant)), get: { .bytes([]) })])
        let xml = DBusIntrospection.xml(interfaces: [interface], isManager: true, children: ["c"])
        #expect(xml.contains("<arg name=\"a&quot;&lt;&amp;&gt;&apos;\" type=\"s\" direction=\"in\"/>"))
        #expect(xml.contains("<property name=\"P\" type=\"a{sv}\" access=\"read\"/>"))
        #expect(xml.contains("<interface name=\"org.freedesktop.DBus.ObjectManager\">"))
        #expect(xml.contains("<node name=\"c\"/>"))
        #expect(xml.hasSuffix("</node>\n"))
    }
}
