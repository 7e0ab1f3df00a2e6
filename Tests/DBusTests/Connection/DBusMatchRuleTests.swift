@testable import DBus
import Testing

/// Match rules (D-Bus Specification, "Match Rules"): their text for AddMatch and the local match.
@Suite("D-Bus match rules")
struct DBusMatchRuleTests {
    @Test func theRuleTextQuotesValuesAndEscapesApostrophes() throws {
        let rule = DBusMatchRule(sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                                 pathNamespace: try DBusObjectPath("/org/bluez"), arguments: [1: "x", 0: "it's"], argumentPaths: [2: "/a/"],
                                 argument0Namespace: "org.bluez")
        #expect(rule.description == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',"
            + "path_namespace='/org/bluez',arg0='it'\\''s',arg1='x',arg2path='/a/',arg0namespace='org.bluez'")
        #expect(DBusMatchRule(kind: .methodCall).description == "type='method_call'")
        #expect(DBusMatchRule(kind: nil).description == "")
    }

    func signal(path: String = "/org/bluez/hci0", sender: String = ":1.5", body: [DBusValue] = []) throws -> DBusMessage {
        DBusMessage(kind: .signal, path: try DBusObjectPath(path), interface: "org.example.I", member: "M", sender: sender, body: body)
    }

    @Test func eachKeyNarrowsTheMatch() throws {
        let message = try signal(body: ["org.bluez.Device1", .objectPath(try DBusObjectPath("/org/bluez/hci0/dev_1"))])
        #expect(DBusMatchRule().matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(kind: .methodCall).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(sender: ":1.5").matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(sender: ":1.6").matches(message, senderOwner: nil))
        // A well-known sender matches through its current owner only.
        #expect(DBusMatchRule(sender: "org.bluez").matches(message, senderOwner: ":1.5"))
        #expect(!DBusMatchRule(sender: "org.bluez").matches(message, senderOwner: ":1.9"))
        #expect(!DBusMatchRule(sender: "org.bluez").matches(message, senderOwner: nil))
        #expect(DBusMatchRule(interface: "org.example.I", member: "M").matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(member: "N").matches(message, senderOwner: nil))
        #expect(DBusMatchRule(path: try DBusObjectPath("/org/bluez/hci0")).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(path: try DBusObjectPath("/org/bluez")).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(pathNamespace: try DBusObjectPath("/org/bluez")).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(pathNamespace: .root).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(pathNamespace: try DBusObjectPath("/org/blue")).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(arguments: [0: "org.bluez.Device1"]).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(arguments: [0: "org.bluez"]).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(arguments: [5: "x"]).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(argument0Namespace: "org.bluez").matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(argument0Namespace: "org.blue").matches(message, senderOwner: nil))
        // argNpath: equal, or one ends with "/" and starts the other; object paths count.
        #expect(DBusMatchRule(argumentPaths: [1: "/org/bluez/"]).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(argumentPaths: [1: "/org/bluez/hci0/dev_1"]).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(argumentPaths: [1: "/org/bluez"]).matches(message, senderOwner: nil))
        #expect(DBusMatchRule(argumentPaths: [0: "org.bluez.Device1"]).matches(message, senderOwner: nil))
        #expect(!DBusMatchRule(destination: ":1.1").matches(message, senderOwner: nil))
    }

    @Test func invalidRulesAreRefusedBeforeTheBusSeesThem() {
        #expect(throws: DBusError.self) { try DBusMatchRule(interface: "nodots").validate() }
        #expect(throws: DBusError.self) { try DBusMatchRule(arguments: [64: "x"]).validate() }
        #expect(throws: DBusError.self) { try DBusMatchRule(path: .root, pathNamespace: .root).validate() }
        #expect(throws: Never.self) { try DBusMatchRule(sender: "org.bluez", member: "M").validate() }
    }
}
