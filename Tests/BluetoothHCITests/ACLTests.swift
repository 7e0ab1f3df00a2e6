import BluetoothCore
import BluetoothHCI
import Testing

/// ACL data packets, fragmentation and reassembly (Core 6.0, Vol 4, Part E, 5.4.2; Vol 3,
/// Part A, 3.1 for the L2CAP length that ends a PDU).
@Suite(.timeLimit(.minutes(1))) struct ACLTests {
    /// An L2CAP basic frame: length, CID 0x0004 (ATT), then `payloadLength` octets 0, 1, 2, ….
    func l2capPDU(payloadLength: Int, cid: UInt16 = 0x0004) -> [UInt8] {
        [UInt8(payloadLength & 0xFF), UInt8(payloadLength >> 8), UInt8(cid & 0xFF), UInt8(cid >> 8)]
            + (0..<payloadLength).map { UInt8(truncatingIfNeeded: $0) }
    }

    @Test func packetEncodingAndDecoding() throws {
        // Handle 0x0040, PB = 10 (first, flushable), BC = 00: header 0x2040 → 40 20; length 3.
        let packet = ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .firstFlushable, data: [1, 2, 3])
        #expect(packet.encode() == bytes("40 20 03 00 01 02 03"))
        #expect(try ACLDataPacket.decode(bytes("40 20 03 00 01 02 03")) == packet)
        // PB = 01 (continuing): 0x1040 → 40 10.
        let continuing = ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .continuing, data: [])
        #expect(continuing.encode() == bytes("40 10 00 00"))
        #expect(try ACLDataPacket.decode(bytes("40 10 00 00")) == continuing)
    }

    @Test func packetLengthMismatch() {
        #expect(throws: PacketDecodingError.lengthMismatch(context: "ACL data packet", declared: 4, actual: 3)) {
            _ = try ACLDataPacket.decode(bytes("40 20 04 00 01 02 03"))
        }
        #expect(throws: PacketDecodingError.self) { _ = try ACLDataPacket.decode(bytes("40 20 04")) }
    }

    @Test func fragmentA251OctetPDUInto27OctetPackets() throws {
        // 4-octet header + 247 octets = 251 = 9 × 27 + 8: ten packets.
        let pdu = l2capPDU(payloadLength: 247)
        #expect(pdu.count == 251)
        let packets = ACLFragmenter.fragments(of: pdu, connectionHandle: 0x0040, maximumDataLength: 27)
        #expect(packets.count == 10)
        #expect(packets.first?.packetBoundary == .firstNonFlushable)
        #expect(packets.dropFirst().allSatisfy { $0.packetBoundary == .continuing })
        #expect(packets.dropLast().allSatisfy { $0.data.count == 27 })
        #expect(packets.last?.data.count == 8)
        #expect(packets.allSatisfy { $0.connectionHandle == 0x0040 })
        // First packet on the wire: 40 00 (PB 00), length 27 (1B 00), L2CAP length 247 (F7 00), CID 04 00.
        #expect(packets.first.map { Array($0.encode().prefix(8)) } == bytes("40 00 1b 00 f7 00 04 00"))
        #expect(packets[1].encode().prefix(4) == [0x40, 0x10, 0x1B, 0x00])
        #expect(packets.flatMap(\.data) == pdu)

        // And back together.
        var reassembler = ACLReassembler()
        var completed: [[UInt8]] = []
        for (index, packet) in packets.enumerated() {
            // Through the wire format, as the controller would deliver them.
            let received = try ACLDataPacket.decode(packet.encode())
            if let whole = try reassembler.append(received) {
                completed.append(whole)
                #expect(index == packets.count - 1)
            }
        }
        #expect(completed == [pdu])
    }

    @Test func emptyPDUIsOneEmptyPacket() {
        let packets = ACLFragmenter.fragments(of: [], connectionHandle: 1, maximumDataLength: 27)
        #expect(packets == [ACLDataPacket(connectionHandle: 1, packetBoundary: .firstNonFlushable, data: [])])
    }

    @Test func singlePacketPDU() throws {
        var reassembler = ACLReassembler()
        let pdu = l2capPDU(payloadLength: 3)
        #expect(try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: pdu)) == pdu)
    }

    @Test func headerSplitAcrossFragments() throws {
        // One-octet fragments: the length is known only after the second.
        let pdu = l2capPDU(payloadLength: 2)
        var reassembler = ACLReassembler()
        var results: [[UInt8]?] = []
        for packet in ACLFragmenter.fragments(of: pdu, connectionHandle: 7, maximumDataLength: 1) {
            results.append(try reassembler.append(packet))
        }
        #expect(results.count == 6)
        #expect(results.dropLast().allSatisfy { $0 == nil })
        #expect(results.last == pdu)
    }

    @Test func continuationWithoutStart() {
        var reassembler = ACLReassembler()
        #expect(throws: ACLReassemblyError.unexpectedContinuation(connectionHandle: 0x0040)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 0x0040, packetBoundary: .continuing, data: [1, 2]))
        }
    }

    @Test func overflow() throws {
        var reassembler = ACLReassembler()
        // L2CAP length 2 → 6 octets expected; the start carries 5, the continuation 3 more.
        #expect(try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [2, 0, 4, 0, 0xAA])) == nil)
        #expect(throws: ACLReassemblyError.overflow(connectionHandle: 1, received: 8, expected: 6)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .continuing, data: [0xBB, 0xCC, 0xDD]))
        }
        // The partial PDU is gone: a continuation now has no start.
        #expect(throws: ACLReassemblyError.unexpectedContinuation(connectionHandle: 1)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .continuing, data: [0]))
        }
    }

    @Test func overflowInTheFirstFragment() {
        var reassembler = ACLReassembler()
        #expect(throws: ACLReassemblyError.overflow(connectionHandle: 1, received: 7, expected: 5)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [1, 0, 4, 0, 9, 9, 9]))
        }
    }

    @Test func interleavedHandles() throws {
        let first = l2capPDU(payloadLength: 60)
        let second = l2capPDU(payloadLength: 40, cid: 0x0006)
        let a = ACLFragmenter.fragments(of: first, connectionHandle: 0x0040, maximumDataLength: 27)
        let b = ACLFragmenter.fragments(of: second, connectionHandle: 0x0041, maximumDataLength: 27)
        #expect(a.count == 3)
        #expect(b.count == 2)
        var reassembler = ACLReassembler()
        #expect(try reassembler.append(a[0]) == nil)
        #expect(try reassembler.append(b[0]) == nil)
        #expect(try reassembler.append(a[1]) == nil)
        #expect(try reassembler.append(b[1]) == second)
        #expect(try reassembler.append(a[2]) == first)
    }

    @Test func newStartReplacesIncompletePDU() throws {
        var reassembler = ACLReassembler()
        _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [10, 0, 4, 0, 1]))
        #expect(throws: ACLReassemblyError.incompletePDUReplaced(connectionHandle: 1, received: 5, expected: 14)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [1, 0, 4, 0]))
        }
        // The new PDU was kept and completes.
        #expect(try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .continuing, data: [0x42])) == [1, 0, 4, 0, 0x42])
    }

    @Test func discardForgetsPartialPDU() {
        var reassembler = ACLReassembler()
        _ = try? reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [10, 0, 4, 0]))
        reassembler.discard(connectionHandle: 1)
        #expect(throws: ACLReassemblyError.unexpectedContinuation(connectionHandle: 1)) {
            _ = try reassembler.append(ACLDataPacket(connectionHandle: 1, packetBoundary: .continuing, data: [0]))
        }
    }
}
