import GATTProfiles
import Testing

@Suite("Serde: text in an encoding", .timeLimit(.minutes(1)))
struct StringEncodingTests {
    @Test("UTF-8 round-trips and rejects invalid sequences")
    func utf8() throws {
        #expect(try StringEncoding.utf8.decode(Array("Grüße".utf8)) == "Grüße")
        #expect(throws: SerdeError.invalidText(encoding: .utf8)) { try StringEncoding.utf8.decode([0xC3]) }
    }

    @Test("UTF-16 in both byte orders, with whole code units and valid surrogates")
    func utf16() throws {
        #expect(try StringEncoding.utf16LittleEndian.encode("Aé") == [0x41, 0x00, 0xE9, 0x00])
        #expect(try StringEncoding.utf16BigEndian.encode("A") == [0x00, 0x41])
        #expect(try StringEncoding.utf16LittleEndian.decode([0x3D, 0xD8, 0x00, 0xDE]) == "😀")
        #expect(throws: SerdeError.invalidText(encoding: .utf16LittleEndian)) { try StringEncoding.utf16LittleEndian.decode([0x41]) }
        #expect(throws: SerdeError.invalidText(encoding: .utf16BigEndian)) { try StringEncoding.utf16BigEndian.decode([0xD8, 0x3D]) }
    }

    @Test("ASCII and ISO 8859-1 refuse what they cannot hold")
    func narrowEncodings() throws {
        #expect(try StringEncoding.ascii.decode([0x48, 0x69]) == "Hi")
        #expect(throws: SerdeError.invalidText(encoding: .ascii)) { try StringEncoding.ascii.decode([0xE9]) }
        #expect(throws: SerdeError.unencodable(encoding: .ascii)) { try StringEncoding.ascii.encode("é") }
        #expect(try StringEncoding.isoLatin1.decode([0xE9]) == "é")
        #expect(try StringEncoding.isoLatin1.encode("é") == [0xE9])
        #expect(throws: SerdeError.unencodable(encoding: .isoLatin1)) { try StringEncoding.isoLatin1.encode("€") }
    }
}
