import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

@Suite("Virtual link: ACL data and credits", .timeLimit(.minutes(1)))
struct DataTests {
    /// An L2CAP PDU on the ATT channel with `count` payload octets.
    static func pdu(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        [UInt8(count & 0xFF), UInt8(count >> 8), 0x04, 0x00] + (0..<count).map { UInt8(truncatingIfNeeded: $0) &+ seed }
    }

    @Test func roundTripWithFragmentationAndCredits() async throws {
        let pair = try await ConnectedPair.make(interval: 12)
        // One 251-octet ACL packet; the data length is 27, so it crosses in 10 LL PDUs,
        // 4 per connection event: 3 events.
        let data = Self.pdu(247)
        let sentAt = pair.central.now
        try pair.central.sendACL(handle: pair.centralHandle, data)
        var received: [ACLDataPacket] = []
        var lastArrival = sentAt
        while received.map(\.data.count).reduce(0, +) < data.count {
            let (packet, time) = try await pair.peripheral.acl()
            received.append(packet)
            lastArrival = time
        }
        #expect(received.count == 10)
        #expect(received.map(\.data.count) == [27, 27, 27, 27, 27, 27, 27, 27, 27, 8])
        #expect(received.first?.packetBoundary == .firstFlushable)
        #expect(received.dropFirst().allSatisfy { $0.packetBoundary == .continuing })
        #expect(received.allSatisfy { $0.connectionHandle == pair.peripheralHandle })
        #expect(received.flatMap(\.data) == data)
        // The credit comes back once the last fragment went over the air, not before.
        let (credits, creditTime) = try await pair.central.completedPackets(handle: pair.centralHandle)
        #expect(credits == 1)
        // Three connection events of 15 ms: the first within one interval of sending, the last two intervals later.
        #expect((lastArrival - sentAt).milliseconds >= 30 && (lastArrival - sentAt).milliseconds <= 45, "\((lastArrival - sentAt).milliseconds) ms")
        // Both come out of the same (third) connection event.
        #expect(creditTime == lastArrival, "the credit returned \((creditTime - sentAt).milliseconds) ms after sending")
        #expect(pair.central.controller.aclBuffersInUse == 0)

        // And back.
        try pair.peripheral.sendACL(handle: pair.peripheralHandle, Self.pdu(10, seed: 7))
        let (reply, _) = try await pair.central.acl()
        #expect(reply.data == Self.pdu(10, seed: 7))
        #expect(reply.connectionHandle == pair.centralHandle)
        #expect(try await pair.peripheral.completedPackets(handle: pair.peripheralHandle).0 == 1)
    }

    @Test func creditsNeverExceedPacketsSentAndOverflowIsReported() async throws {
        let link = VirtualLink.manual()
        let pair = try await ConnectedPair.make(link: link, centralConfiguration: .init(aclDataLength: 27, aclBufferCount: 4))
        // Nine packets on four buffers: five overflow. Simulated time stands still meanwhile
        // (the overflows come at once), so no connection event frees a buffer.
        let sentAt = link.now
        for index in 0..<9 { try pair.central.sendACL(handle: pair.centralHandle, Self.pdu(23, seed: UInt8(index))) }
        var overflows = 0
        for _ in 0..<5 {
            let (_, time) = try await pair.central.event("Data Buffer Overflow") { if case .dataBufferOverflow = $0 { return true }; return false }
            #expect(time == sentAt)
            overflows += 1
        }
        #expect(overflows == 5)
        var credits = 0
        while credits < 4 { credits += try await pair.central.completedPackets(handle: pair.centralHandle).0 }
        #expect(credits == 4)
        #expect(try await pair.central.expectNothing("more credits", for: .milliseconds(150)) { item in
            if case .numberOfCompletedPackets? = item.event { return true }; return false
        })
        var delivered: [[UInt8]] = []
        while delivered.count < 4 { delivered.append(try await pair.peripheral.acl().0.data) }
        #expect(delivered == (0..<4).map { Self.pdu(23, seed: UInt8($0)) })
    }

    @Test func packetsPerEventLimitsThroughput() async throws {
        // 4 packets of 251 octets per 15 ms event: about 67 kB/s.
        let pair = try await ConnectedPair.make(interval: 12, centralConfiguration: .init(), peripheralConfiguration: .init())
        _ = try await pair.central.run(LESetDataLengthCommand(connectionHandle: pair.centralHandle, txOctets: 251, txTime: 2120))
        try await pair.central.leEvent("data length change") { if case .dataLengthChange = $0 { return true }; return false }
        let count = 40
        var sent = 0
        var credits = 8
        let start = pair.central.now
        var bytes = 0
        while sent < count {
            while credits > 0, sent < count {
                try pair.central.sendACL(handle: pair.centralHandle, Self.pdu(247, seed: UInt8(sent)))
                sent += 1
                credits -= 1
            }
            credits += try await pair.central.completedPackets(handle: pair.centralHandle).0
        }
        while bytes < count * 251 { bytes += try await pair.peripheral.acl().0.data.count }
        let elapsed = (pair.central.now - start).milliseconds
        let throughput = Double(bytes) / elapsed // bytes per ms = kB/s
        // 10 events of 15 ms for 40 packets: ≥ 135 ms, and no more than one more event.
        #expect(elapsed >= 135 && elapsed <= 150, "\(elapsed) ms")
        #expect(throughput < 80, "\(throughput) kB/s")
    }

    @Test func pingPongTakesOneToTwoConnectionIntervals() async throws {
        // 20 ms connection interval.
        let pair = try await ConnectedPair.make(interval: 16)
        var roundTrips: [Double] = []
        for index in 0..<10 {
            let start = pair.central.now
            try pair.central.sendACL(handle: pair.centralHandle, Self.pdu(4, seed: UInt8(index)))
            let (request, _) = try await pair.peripheral.acl()
            try pair.peripheral.sendACL(handle: pair.peripheralHandle, request.data)
            let (reply, time) = try await pair.central.acl()
            #expect(reply.data == Self.pdu(4, seed: UInt8(index)))
            roundTrips.append((time - start).milliseconds)
        }
        // The answer cannot leave in the event that brought the request: at least one interval,
        // and it leaves at the next one, so at most two.
        #expect(roundTrips.allSatisfy { $0 >= 20 && $0 <= 40 }, "\(roundTrips)")
    }

    @Test func dataToAnUnknownHandleIsDropped() async throws {
        let pair = try await ConnectedPair.make()
        try pair.central.sendACL(handle: 0x0EEE, Self.pdu(4))
        try pair.central.sendACL(handle: pair.centralHandle, Self.pdu(5))
        #expect(try await pair.peripheral.acl().0.data == Self.pdu(5))
        #expect(try await pair.peripheral.expectNothing("more data", for: .milliseconds(100)) { $0.acl != nil })
    }

    @Test func oversizedACLPacketIsRefused() async throws {
        let pair = try await ConnectedPair.make(centralConfiguration: .init(aclDataLength: 27))
        try pair.central.sendACL(handle: pair.centralHandle, Self.pdu(40))
        try await pair.central.event("Data Buffer Overflow") { if case .dataBufferOverflow = $0 { return true }; return false }
        #expect(pair.central.controller.aclBuffersInUse == 0)
    }
}
