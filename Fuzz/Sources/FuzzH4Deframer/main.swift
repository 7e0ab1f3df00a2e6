import BluetoothTransport
import FuzzSupport

/// The stream read the plain way: indicator, header, length, parameters, again.
struct ReferenceDeframing {
    var packets: [H4Packet] = []
    /// Where an unknown indicator is, if the stream has one before its end.
    var failureOffset: Int?
    /// The bytes of the last, incomplete packet.
    var leftover = 0

    init(_ stream: [UInt8]) {
        var offset = 0
        while offset < stream.count {
            guard let indicator = HCIPacketIndicator(rawValue: stream[offset]) else {
                failureOffset = offset
                return
            }
            // Header size and length field (Core 6.0, Vol 4, Part E, 5.4).
            let (headerSize, length): (Int, (ArraySlice<UInt8>) -> Int) = switch indicator {
            case .command, .sco: (3, { Int($0[$0.startIndex + 2]) })
            case .event: (2, { Int($0[$0.startIndex + 1]) })
            case .acl: (4, { Int($0[$0.startIndex + 2]) | Int($0[$0.startIndex + 3]) << 8 })
            case .iso: (4, { (Int($0[$0.startIndex + 2]) | Int($0[$0.startIndex + 3]) << 8) & 0x3FFF })
            }
            let available = stream.count - offset - 1
            guard available >= headerSize else { break }
            let header = stream[(offset + 1)..<(offset + 1 + headerSize)]
            let total = headerSize + length(header)
            guard available >= total else { break }
            packets.append(H4Packet(indicator, Array(stream[(offset + 1)..<(offset + 1 + total)])))
            offset += 1 + total
        }
        leftover = stream.count - offset
    }
}

/// The H4 deframer: whatever the byte stream and however the operating system splits it into
/// reads, the packets that come out are the same, in the same order, and the same as a
/// straightforward reading of the stream says (Core 6.0, Vol 4, Part A, 2).
///
/// Input: a count of cut points (one byte, 0...31), that many 2-byte cut positions, then the
/// stream.
runFuzzer { input in
    let cutCount = Int(input.byte() % 32)
    let cutChoices = (0..<cutCount).map { _ in Int(input.uint16()) }
    let stream = input.rest()
    let cuts = Set(cutChoices.map { stream.isEmpty ? 0 : $0 % (stream.count + 1) }).sorted()

    let expected = ReferenceDeframing(stream)

    // In one read.
    var whole = H4Deframer()
    do {
        let packets = try whole.append(stream[...])
        fuzzCheck(expected.failureOffset == nil, "no error for an unknown indicator at \(expected.failureOffset ?? -1)")
        fuzzCheck(packets == expected.packets, "one read: \(packets) != \(expected.packets)")
        fuzzCheck(whole.bufferedByteCount == expected.leftover, "one read leaves \(whole.bufferedByteCount), not \(expected.leftover)")
    } catch {
        fuzzCheck(expected.failureOffset != nil, "one read threw \(error) on a well-formed stream")
    }

    // In reads cut at the chosen points: the packets of the reads before a failure are the
    // first of the expected ones; a failure comes in the read that holds the bad indicator.
    var chunked = H4Deframer()
    var packets: [H4Packet] = []
    var readStart = 0
    for end in cuts + [stream.count] where end >= readStart {
        do {
            // Copies of each read, as a transport's read buffer is reused.
            packets += try chunked.append(Array(stream[readStart..<end]))
        } catch {
            guard let failure = expected.failureOffset else { fuzzFailure("read \(readStart)..<\(end) threw \(error) on a well-formed stream") }
            fuzzCheck(failure < end, "read \(readStart)..<\(end) threw, but the bad indicator is at \(failure)")
            fuzzCheck(expected.packets.starts(with: packets), "packets before the failure differ: \(packets)")
            return
        }
        readStart = end
    }
    fuzzCheck(expected.failureOffset == nil, "no read threw for the bad indicator at \(expected.failureOffset ?? -1)")
    fuzzCheck(packets == expected.packets, "cut at \(cuts): \(packets) != \(expected.packets)")
    fuzzCheck(chunked.bufferedByteCount == expected.leftover, "reads leave \(chunked.bufferedByteCount), not \(expected.leftover)")
}
