import BluetoothCore
import BluetoothHCI
import FuzzSupport

/// ACL reassembly (Core 6.0, Vol 4, Part E, 5.4.2 and Vol 3, Part A, 3.1): after any sequence
/// of fragments, well-formed or not, on any connections, a well-formed L2CAP PDU sent next on
/// a connection still comes out whole, once, from its last fragment. Every PDU that comes out
/// is as long as its basic header says. The ACL packet's two decoders agree and round-trip.
///
/// Input: a count of garbage fragments; for each a control byte (connection, Packet_Boundary
/// flag) and a chunk of data; then the final PDU's connection, its payload and the size of its
/// fragments.
let handles: [UInt16] = [0x0001, 0x0040, 0x0EFF, 0x0FFF]

/// A PDU that comes out is exactly as long as its basic header says.
func checkWhole(_ pdu: ArraySlice<UInt8>) {
    guard let length = ByteReader.uint16(in: pdu, at: 0) else { fuzzFailure("a PDU shorter than its header came out: \(fuzzHex(pdu))") }
    fuzzCheck(pdu.count == 4 + Int(length), "a PDU of \(pdu.count) bytes says it has \(length): \(fuzzHex(pdu))")
}

runFuzzer { input in
    var reassembler = ACLReassembler()
    let garbageCount = Int(input.byte() % 64)
    for _ in 0..<garbageCount {
        let control = input.byte()
        let handle = handles[Int(control & 0b11)]
        let boundary = ACLPacketBoundary(rawValue: (control >> 2) & 0b11) ?? .continuing
        let data = input.chunk()
        // The fragment as the controller sends it, through the receive path's decoder.
        let packet = ACLDataPacket(connectionHandle: handle, packetBoundary: boundary, broadcastFlag: control >> 6, data: data)
        let encoded = packet.encode()
        let parsed: (connectionHandle: UInt16, boundary: ACLPacketBoundary, data: ArraySlice<UInt8>)
        let decoded: ACLDataPacket
        do {
            parsed = try ACLDataPacket.parse(encoded[...])
            decoded = try ACLDataPacket.decode(encoded)
        } catch {
            fuzzFailure("ACL packet \(fuzzHex(encoded)) does not decode: \(error)")
        }
        fuzzCheck(decoded == packet, "ACL packet \(packet) decodes as \(decoded)")
        fuzzCheck(parsed.connectionHandle == handle && parsed.boundary == boundary && Array(parsed.data) == data,
                  "ACL packet \(packet) parses as \(parsed)")
        let outcome = reassembler.append(connectionHandle: handle, boundary: boundary, data: parsed.data)
        if let pdu = outcome.pdu { checkWhole(pdu) }
    }

    // The well-formed PDU: basic header (length, channel) then payload, in fragments.
    let handle = handles[Int(input.byte() & 0b11)]
    let fragmentSize = max(1, Int(input.byte()))
    let channel = input.uint16()
    let payload = input.longChunk()
    var pdu = ByteWriter()
    pdu.write(UInt16(payload.count))
    pdu.write(channel)
    pdu.write(contentsOf: payload)
    let fragments = stride(from: 0, to: pdu.bytes.count, by: fragmentSize).map { Array(pdu.bytes[$0..<min($0 + fragmentSize, pdu.bytes.count)]) }
    for (index, fragment) in fragments.enumerated() {
        let boundary: ACLPacketBoundary = index == 0 ? .firstFlushable : .continuing
        let outcome = reassembler.append(connectionHandle: handle, boundary: boundary, data: fragment[...])
        if index < fragments.count - 1 {
            fuzzCheck(outcome.pdu == nil, "fragment \(index) of \(fragments.count) gave a PDU: \(fuzzHex(outcome.pdu ?? []))")
        } else {
            fuzzCheck(outcome.pdu.map(Array.init) == pdu.bytes,
                      "the PDU \(fuzzHex(pdu.bytes)) in \(fragments.count) fragment(s) came out as \(outcome.pdu.map(fuzzHex) ?? "nothing")")
        }
        if index > 0 { fuzzCheck(outcome.dropped == nil, "fragment \(index) dropped something: \(String(describing: outcome.dropped))") }
    }
}
