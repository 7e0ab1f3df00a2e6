import BluetoothCore
@testable import BluetoothTransport
import Foundation
import Glibc
import Testing

/// A capture holds what pairing and encryption carried: it is private to its user (`0600`),
/// never written through a link someone put in its place, and its keys are blanked unless the
/// user asks to keep them (for Wireshark's decryption).
@Suite("HCI capture: file safety and key material", .timeLimit(.minutes(1)))
struct HCICaptureSecurityTests {
    let reset = H4Packet(.command, [0x03, 0x0C, 0x00])

    private func directory() throws -> String { try TestDescriptor.makeTemporaryDirectory() }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        return status.st_mode & 0o777
    }

    private func records(_ path: String) throws -> [H4Packet] {
        try BTSnoop.decodeFile(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).records.map { try $0.packet() }
    }

    private func writeCapture(_ path: String, _ packets: [H4Packet]) throws {
        let capture = try HCICapture(path: path)
        for packet in packets { capture.record(sent: packet) }
        capture.close()
    }

    // MARK: The file

    @Test("a new capture is 0600 whatever the umask", arguments: [HCICapture.FileMode.createNew, .append, .replace])
    func newFileIsPrivate(_ fileMode: HCICapture.FileMode) throws {
        let path = try directory() + "/new.btsnoop"
        let previous = umask(0o022)
        defer { umask(previous) }
        let capture = try HCICapture(path: path, mode: fileMode)
        capture.close()
        #expect(mode(path) == 0o600)
    }

    @Test("an existing file appended to or replaced is made 0600", arguments: [HCICapture.FileMode.append, .replace])
    func existingFileIsMadePrivate(_ fileMode: HCICapture.FileMode) throws {
        let path = try directory() + "/old.btsnoop"
        try writeCapture(path, [reset])
        #expect(chmod(path, 0o644) == 0)
        let capture = try HCICapture(path: path, mode: fileMode)
        capture.record(sent: reset)
        capture.close()
        #expect(mode(path) == 0o600)
    }

    @Test("a symbolic link in the capture's place is refused in every mode, its target untouched",
          arguments: [HCICapture.FileMode.createNew, .append, .replace])
    func symbolicLinkIsRefused(_ fileMode: HCICapture.FileMode) throws {
        let folder = try directory()
        let target = folder + "/victim.btsnoop"
        try writeCapture(target, [reset])
        let before = try Data(contentsOf: URL(fileURLWithPath: target))
        let link = folder + "/capture.btsnoop"
        #expect(symlink(target, link) == 0)
        #expect(throws: CaptureError.self) { _ = try HCICapture(path: link, mode: fileMode) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: target)) == before, "the link's target is as it was")
        // A link to nothing is refused too: it would create the file where the link points.
        let dangling = folder + "/dangling.btsnoop"
        #expect(symlink(folder + "/elsewhere.btsnoop", dangling) == 0)
        #expect(throws: CaptureError.self) { _ = try HCICapture(path: dangling, mode: fileMode) }
        #expect(!FileManager.default.fileExists(atPath: folder + "/elsewhere.btsnoop"))
    }

    @Test("appending to or replacing a file with another name (a hard link) or not a regular file is refused",
          arguments: [HCICapture.FileMode.append, .replace])
    func hardLinksAndSpecialFilesAreRefused(_ fileMode: HCICapture.FileMode) throws {
        let folder = try directory()
        let original = folder + "/original.btsnoop"
        try writeCapture(original, [reset])
        let before = try Data(contentsOf: URL(fileURLWithPath: original))
        let linked = folder + "/capture.btsnoop"
        #expect(link(original, linked) == 0)
        #expect(throws: CaptureError.self) { _ = try HCICapture(path: linked, mode: fileMode) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: original)) == before)
        let fifo = folder + "/fifo.btsnoop"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: CaptureError.self) { _ = try HCICapture(path: fifo, mode: fileMode) }
    }

    @Test func theErrorSaysWhyTheFileWasRefused() throws {
        let folder = try directory()
        let link = folder + "/capture.btsnoop"
        #expect(symlink(folder + "/target", link) == 0)
        do {
            _ = try HCICapture(path: link, mode: .replace)
            Issue.record("a symbolic link was accepted")
        } catch {
            #expect("\(error)".contains("symbolic link"), "\(error)")
        }
    }

    // MARK: Key material

    /// A packet and the ranges of its bytes (after the H4 indicator) that hold key material.
    struct Keyed: Sendable, CustomTestStringConvertible {
        var name: String
        var packet: H4Packet
        var received = false
        var secrets: [Range<Int>]
        var testDescription: String { name }
    }

    static func key(_ seed: UInt8, _ count: Int = 16) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &+ $0) | 0x80 } }

    static func command(_ opcode: UInt16, _ parameters: [UInt8]) -> H4Packet {
        H4Packet(.command, [UInt8(opcode & 0xFF), UInt8(opcode >> 8), UInt8(parameters.count)] + parameters)
    }

    static func event(_ code: UInt8, _ parameters: [UInt8]) -> H4Packet { H4Packet(.event, [code, UInt8(parameters.count)] + parameters) }

    /// One ACL packet on handle 0x0040 carrying a whole L2CAP PDU on `cid`.
    static func acl(cid: UInt16, _ payload: [UInt8], handle: UInt16 = 0x0040, boundary: UInt16 = 0x2) -> H4Packet {
        let data = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        return aclFragment(data, handle: handle, boundary: boundary)
    }

    static func handle(of packet: H4Packet) -> UInt16 {
        UInt16(packet.bytes[packet.bytes.startIndex]) | UInt16(packet.bytes[packet.bytes.startIndex + 1] & 0x0F) << 8
    }

    static func aclFragment(_ data: [UInt8], handle: UInt16 = 0x0040, boundary: UInt16) -> H4Packet {
        let header = handle | boundary << 12
        return H4Packet(.acl, [UInt8(header & 0xFF), UInt8(header >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data)
    }

    static let keyed: [Keyed] = {
        let handle: [UInt8] = [0x40, 0x00]
        let address: [UInt8] = [1, 2, 3, 4, 5, 6]
        var cases = [
            Keyed(name: "LE Enable Encryption", packet: command(0x2019, handle + [9, 9, 9, 9, 9, 9, 9, 9] + [7, 7] + key(1)),
                  secrets: [15..<31]),
            Keyed(name: "LE Long Term Key Request Reply", packet: command(0x201A, handle + key(2)), secrets: [5..<21]),
            Keyed(name: "LE Encrypt", packet: command(0x2017, key(3) + key(4)), secrets: [3..<19]),
            Keyed(name: "LE Encrypt's Command Complete", packet: event(0x0E, [1, 0x17, 0x20, 0] + key(5)), received: true,
                  secrets: [6..<22]),
            Keyed(name: "LE Add Device To Resolving List", packet: command(0x2027, [1] + address + key(6) + key(7)), secrets: [10..<42]),
            Keyed(name: "LE Generate DHKey Complete", packet: event(0x3E, [0x09, 0] + key(8, 32)), received: true, secrets: [4..<36]),
            Keyed(name: "Link Key Request Reply", packet: command(0x040B, address + key(9)), secrets: [9..<25]),
            Keyed(name: "Link Key Notification", packet: event(0x18, address + key(10) + [4]), received: true, secrets: [8..<24]),
            Keyed(name: "Remote OOB Data Request Reply", packet: command(0x0430, address + key(11) + key(12)), secrets: [9..<41]),
            Keyed(name: "Read Local OOB Data's Command Complete", packet: event(0x0E, [1, 0x57, 0x0C, 0] + key(13) + key(14)),
                  received: true, secrets: [6..<38]),
        ]
        // The Security Manager PDUs with a secret value, sent and received (ACL data: 4 octets
        // of HCI header, 4 of L2CAP header, the code, then the 16 octets).
        let smp: [(String, UInt8)] = [("Pairing Confirm", 0x03), ("Pairing Random", 0x04), ("Encryption Information", 0x06),
                                      ("Identity Information", 0x08), ("Signing Information", 0x0A), ("Pairing DHKey Check", 0x0D)]
        for (name, code) in smp {
            for received in [false, true] {
                cases.append(Keyed(name: "\(name), \(received ? "received" : "sent")", packet: acl(cid: 0x0006, [code] + key(code)),
                                   received: received, secrets: [9..<25]))
            }
        }
        return cases
    }()

    @Test("the key octets of each key-bearing packet are zeros in the file, every other octet and every length as sent",
          arguments: keyed)
    func keyMaterialIsBlanked(_ keyed: Keyed) throws {
        let path = try directory() + "/keys.btsnoop"
        let capture = try HCICapture(path: path)
        if keyed.received { capture.record(received: [keyed.packet]) } else { capture.record(sent: keyed.packet) }
        capture.close()
        let written = try #require(try records(path).first)
        #expect(written.bytes.count == keyed.packet.bytes.count)
        var expected = Array(keyed.packet.bytes)
        for range in keyed.secrets { for index in range { expected[index] = 0 } }
        #expect(Array(written.bytes) == expected)
        #expect(expected != Array(keyed.packet.bytes), "the case has key octets")
    }

    @Test("with the keys kept, the file holds every packet exactly as it went", arguments: keyed)
    func keyMaterialIsKeptWhenAsked(_ keyed: Keyed) throws {
        let path = try directory() + "/kept.btsnoop"
        let capture = try HCICapture(path: path, keys: .kept)
        if keyed.received { capture.record(received: [keyed.packet]) } else { capture.record(sent: keyed.packet) }
        capture.close()
        #expect(try records(path) == [keyed.packet])
    }

    @Test func packetsWithoutKeysAreWrittenAsTheyWent() throws {
        let path = try directory() + "/plain.btsnoop"
        let packets = [
            reset,
            Self.acl(cid: 0x0006, [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07]), // Pairing Request
            Self.acl(cid: 0x0006, [0x07, 0x34, 0x12] + [UInt8](repeating: 0x55, count: 8)), // Central Identification: EDIV, Rand
            Self.acl(cid: 0x0004, [0x0B] + Self.key(20)), // an ATT Read Response of 16 octets
            Self.command(0x2026, Self.key(21, 64)), // LE Generate DHKey: the peer's public key
        ]
        let capture = try HCICapture(path: path)
        for packet in packets { capture.record(sent: packet) }
        capture.close()
        #expect(try records(path) == packets)
    }

    @Test("an SMP PDU cut into ACL fragments anywhere, even inside its header, has its key blanked across the fragments")
    func fragmentedSecurityManagerPDUs() throws {
        let ltk = Self.key(0x40)
        let pdu = [17, 0, 0x06, 0x00, 0x06] + ltk // L2CAP header, Encryption Information, LTK
        // Every way of cutting it in two, and one octet per fragment.
        var cuts: [[Int]] = (1..<pdu.count).map { [$0] }
        cuts.append(Array(1..<pdu.count))
        for cut in cuts {
            let bounds = [0] + cut + [pdu.count]
            let fragments = zip(bounds, bounds.dropFirst()).enumerated().map { index, range in
                Self.aclFragment(Array(pdu[range.0..<range.1]), boundary: index == 0 ? 0x2 : 0x1)
            }
            let path = try directory() + "/fragments.btsnoop"
            let capture = try HCICapture(path: path)
            // Interleaved with another link's PDU, and the other direction's, which must not disturb it.
            capture.record(received: [fragments[0], Self.acl(cid: 0x0004, [0x0B] + Self.key(1), handle: 0x0041)])
            capture.record(sent: Self.aclFragment([3, 0], boundary: 0x2))
            capture.record(received: Array(fragments.dropFirst()))
            capture.close()
            let file = try BTSnoop.decodeFile(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).records
            let received = try file.filter { $0.flags.contains(.received) }.map { try $0.packet() }
            let data = received.filter { Self.handle(of: $0) == 0x0040 }.flatMap { Array($0.bytes.dropFirst(4)) }
            #expect(data == Array(pdu.prefix(5)) + [UInt8](repeating: 0, count: 16), "cut at \(cut)")
            // The other link's 16-octet ATT value is not a key.
            let other = received.first { Self.handle(of: $0) == 0x0041 }
            #expect(other.map { Array($0.bytes.suffix(16)) } == Self.key(1))
        }
    }

    @Test("a continuation whose start the capture never saw is blanked whole")
    func orphanContinuationsAreBlanked() throws {
        let path = try directory() + "/orphan.btsnoop"
        let capture = try HCICapture(path: path)
        let orphan = Self.aclFragment(Self.key(3), boundary: 0x1)
        capture.record(received: [orphan])
        capture.close()
        let written = try #require(try records(path).first)
        #expect(Array(written.bytes) == Array(orphan.bytes.prefix(4)) + [UInt8](repeating: 0, count: 16))
    }

    @Test("after the capture dropped packets, a continuation is blanked whole: its start may be lost")
    func dropsMakeContinuationsUnknown() throws {
        let path = try directory() + "/drops.btsnoop"
        let capture = try HCICapture(path: path, mode: .createNew, keys: .blanked, queueLimit: 1, queueByteLimit: 1 << 20,
                                     logger: .init(label: "test"), clock: { 1 }, startsWriter: false)
        let start = Self.aclFragment([3, 0, 0x04, 0x00], boundary: 0x2) // an ATT PDU of 3 octets, none here yet
        // The queue holds one packet: the second start is dropped, as when the writer falls behind.
        capture.record(received: [start, Self.aclFragment([17, 0, 0x06, 0x00, 0x06], boundary: 0x2)])
        capture.flush()
        capture.record(received: [Self.aclFragment([0x0B, 0x01, 0x02], boundary: 0x1)])
        capture.flush()
        capture.close()
        let written = try records(path)
        #expect(written.count == 2)
        #expect(Array(written[1].bytes.dropFirst(4)) == [0, 0, 0], "the packet after the loss may continue the lost one: blanked")
    }
}
