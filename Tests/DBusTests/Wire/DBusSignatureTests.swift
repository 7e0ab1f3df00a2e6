@testable import DBus
import Testing

/// Signatures (D-Bus Specification, "Signatures" and "Valid Signatures").
@Suite("D-Bus signatures")
struct DBusSignatureTests {
    @Test func everyBasicTypeCodeParses() throws {
        let signature = try DBusSignature("ybnqiuxtdsogh")
        #expect(signature.types == [
            .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .string, .objectPath, .signature, .unixFD,
        ])
        #expect(signature.description == "ybnqiuxtdsogh")
    }

    @Test func containersParseIntoTheirTypes() throws {
        #expect(try DBusSignature("a{sv}").types == [.array(.dictEntry(key: .string, value: .variant))])
        #expect(try DBusSignature("oa{sa{sv}}").types == [
            .objectPath, .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))),
        ])
        #expect(try DBusSignature("(ia(sv))v").types == [.struct([.int32, .array(.struct([.string, .variant]))]), .variant])
        #expect(try DBusSignature("aay").types == [.array(.array(.byte))])
        #expect(try DBusSignature("").types.isEmpty)
    }

    @Test func typesPrintAsTheirSignature() throws {
        let type = DBusType.array(.dictEntry(key: .objectPath, value: .struct([.unixFD, .array(.variant)])))
        #expect(type.description == "a{o(hav)}")
        #expect(try DBusSignature([type, .boolean]).description == "a{o(hav)}b")
    }

    @Test("invalid signatures are typed errors", arguments: [
        "z", "(", ")", "()", "a", "{sv}", "a{vs}", "a{s}", "a{svv}", "a{sv", "a{}", "(s", "s)", "a(i", "}", "ai}", "\u{0}",
    ])
    func invalidSignature(_ text: String) {
        #expect(throws: DBusWireError.self) { try DBusSignature(text) }
    }

    @Test func aSignatureIsAtMost255Bytes() throws {
        _ = try DBusSignature(String(repeating: "y", count: 255))
        #expect {
            try DBusSignature(String(repeating: "y", count: 256))
        } throws: { error in
            guard case let DBusWireError.invalidSignature(_, reason) = error else { return false }
            return reason.contains("255")
        }
    }

    @Test func arraysNestAtMost32Deep() throws {
        _ = try DBusSignature(String(repeating: "a", count: 32) + "y")
        #expect(throws: DBusWireError.self) { try DBusSignature(String(repeating: "a", count: 33) + "y") }
    }

    @Test func structsNestAtMost32DeepAndDictEntriesCountAsStructs() throws {
        _ = try DBusSignature(String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32))
        #expect(throws: DBusWireError.self) {
            try DBusSignature(String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33))
        }
        // 31 structs around a dict entry: 32 struct levels, allowed; one more is not.
        _ = try DBusSignature(String(repeating: "(", count: 31) + "a{sy}" + String(repeating: ")", count: 31))
        #expect(throws: DBusWireError.self) {
            try DBusSignature(String(repeating: "(", count: 32) + "a{sy}" + String(repeating: ")", count: 32))
        }
    }

    @Test func thirtyTwoArraysAndThirtyTwoStructsTogetherAreAllowed() throws {
        let text = String(repeating: "a(", count: 32) + "y" + String(repeating: ")", count: 32)
        #expect(text.utf8.count <= 255)
        _ = try DBusSignature(text)
    }

    @Test func typesBuiltByHandAreCheckedLikeParsedOnes() {
        #expect(throws: DBusWireError.self) { try DBusSignature([.struct([])]) }
        #expect(throws: DBusWireError.self) { try DBusSignature([.dictEntry(key: .string, value: .variant)]) }
        #expect(throws: DBusWireError.self) { try DBusSignature([.array(.dictEntry(key: .variant, value: .string))]) }
        var deep = DBusType.byte
        for _ in 0..<33 { deep = .array(deep) }
        #expect(throws: DBusWireError.self) { try DBusSignature([deep]) }
    }
}
