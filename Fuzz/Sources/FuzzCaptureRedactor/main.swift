// `@testable`: the redactor is internal to the transport module (the capture's writer uses it).
@testable import BluetoothTransport
import FuzzSupport

/// The capture's key blanking, fed what a peer may send: L2CAP PDUs on one link, each cut into
/// ACL fragments anywhere (even inside the L2CAP header), with another link's arbitrary packets
/// (any H4 packet, orphan continuations included) between them. Whatever the cuts, the octets
/// blanked are the same octets of each PDU as when it comes whole, never a header octet, never
/// past a packet; an SMP PDU with a secret value has exactly its 16 value octets blanked.
///
/// Input: a count of PDUs (one byte, 0...7); for each, a CID choice (one byte: even is SMP,
/// 0x0006; else ATT, 0x0004), a chunk (the payload), a count of cuts (one byte, 0...3) and that
/// many cut bytes, and a chunk of the other link's packet (indicator choice first); then nothing.
runFuzzer { input in
    struct Piece {
        var pdu: [UInt8]
        var cuts: [Int]
        var noise: H4Packet
    }
    var pieces: [Piece] = []
    for _ in 0..<Int(input.byte() % 8) {
        let cid: UInt16 = input.byte() % 2 == 0 ? 0x0006 : 0x0004
        let payload = input.chunk()
        let pdu = [UInt8(payload.count & 0xFF), UInt8(payload.count >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        let cuts = Set((0..<Int(input.byte() % 4)).map { _ in 1 + Int(input.byte()) % max(1, pdu.count - 1) }).filter { $0 < pdu.count }.sorted()
        let indicator = HCIPacketIndicator.allCases[Int(input.byte()) % HCIPacketIndicator.allCases.count]
        var noise = input.chunk()
        // The other link: its ACL packets say handle 0x0041.
        if indicator == .acl {
            while noise.count < 2 { noise.append(0) }
            noise[0] = 0x41
            noise[1] = noise[1] & 0x30
        }
        pieces.append(Piece(pdu: pdu, cuts: cuts, noise: H4Packet(indicator, noise)))
    }

    func acl(_ data: ArraySlice<UInt8>, start: Bool) -> H4Packet {
        let header: UInt16 = 0x0040 | (start ? 0x2000 : 0x1000)
        return H4Packet(.acl, [UInt8(header & 0xFF), UInt8(header >> 8), UInt8(data.count & 0xFF), UInt8(data.count >> 8)] + data)
    }

    /// The octets of each PDU blanked, sent whole or cut.
    func blanked(cut: Bool) -> [Set<Int>] {
        var redactor = CaptureRedactor()
        var result: [Set<Int>] = []
        for piece in pieces {
            let bounds = [0] + (cut ? piece.cuts : []) + [piece.pdu.count]
            var octets = Set<Int>()
            for (index, range) in zip(bounds, bounds.dropFirst()).enumerated() {
                let packet = acl(piece.pdu[range.0..<range.1], start: index == 0)
                for secret in redactor.secretRanges(in: packet, received: true) {
                    fuzzCheck(secret.lowerBound >= 4 && secret.upperBound <= packet.bytes.count,
                              "blanked \(secret) of a fragment of \(packet.bytes.count) octets: its header, or past it")
                    for octet in secret { octets.insert(range.0 + octet - 4) }
                }
            }
            result.append(octets)
            let noise = redactor.secretRanges(in: piece.noise, received: true)
            fuzzCheck(noise.allSatisfy { $0.lowerBound >= 0 && $0.upperBound <= piece.noise.bytes.count }, "\(noise) past \(piece.noise)")
        }
        return result
    }

    let whole = blanked(cut: false)
    fuzzCheck(blanked(cut: true) == whole, "cutting the PDUs changed what was blanked")
    for (piece, octets) in zip(pieces, whole) {
        let isSecret = piece.pdu[2] == 0x06 && piece.pdu.count > 4 && CaptureRedactor.secretSecurityManagerCodes.contains(piece.pdu[4])
        let expected = isSecret ? Set(5..<min(21, piece.pdu.count)) : []
        fuzzCheck(octets == expected, "PDU \(piece.pdu): blanked \(octets.sorted()), expected \(expected.sorted())")
    }
}
