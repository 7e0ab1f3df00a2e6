import BluetoothCore
import BluetoothHCI
import BluetoothHost
@testable import BluetoothVirtual
import Testing

/// A raw peer that breaks the credit-based channel rules (Core 6.0, Vol 3, Part A, 3.4.3, 4.22
/// to 4.26, 10.1) against our host's channel server: refusals carry the spec's results, and
/// every breach disconnects the channel with a typed error, never the link or the host.
@Suite("Host: L2CAP channels against a hostile peer", .timeLimit(.minutes(1)))
struct L2CAPChannelHostileTests {
    private struct Peer {
        let rig: CentralHostRig
        let handle: UInt16
        var identifier: UInt8 = 0

        /// Sends a signalling command and returns the next one the host sends back.
        mutating func exchange(_ command: LESignalingCommand) async throws -> LESignalingCommand {
            send(command)
            return try await next()
        }

        mutating func send(_ command: LESignalingCommand) {
            identifier &+= 1
            try? rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(
                channelID: .leSignaling, payload: LESignalingPacket(identifier: identifier, command: command).encode()))
        }

        func sendFrame(to cid: L2CAPChannelID, _ payload: [UInt8]) throws {
            try rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(channelID: cid, payload: payload))
        }

        /// Sends a signalling command with the identifier of the host's request it answers.
        func send(_ command: LESignalingCommand, identifier: UInt8) {
            try? rig.peripheral.sendACL(handle: handle, L2CAPBasicFrame.encode(
                channelID: .leSignaling, payload: LESignalingPacket(identifier: identifier, command: command).encode()))
        }

        /// The next signalling command from the host.
        func next() async throws -> LESignalingCommand {
            try await nextPacket().command
        }

        /// The next signalling packet from the host, with its identifier.
        func nextPacket() async throws -> LESignalingPacket {
            while true {
                let frame = try L2CAPBasicFrame.decode(try await rig.peripheral.acl().0.data)
                guard frame.channelID == .leSignaling else { continue }
                return try LESignalingPacket.decode(frame.payload)
            }
        }

        /// Opens a channel from `source`; returns the host's CID.
        mutating func open(source: UInt16, credits: UInt16 = 5) async throws -> L2CAPChannelID {
            let answer = try await exchange(.leCreditBasedConnectionRequest(.init(
                spsm: 0x0080, sourceCID: L2CAPChannelID(rawValue: source), mtu: 100, mps: 50, initialCredits: credits)))
            guard case let .leCreditBasedConnectionResponse(response) = answer, response.result == .success else {
                throw TestTimeout(description: "channel refused: \(answer)")
            }
            #expect(response.mtu == 100 && response.mps == 50 && response.initialCredits == 2)
            return response.destinationCID
        }

        func expectDisconnection(of cid: L2CAPChannelID, source: UInt16) async throws {
            #expect(try await next() == .disconnectionRequest(.init(destinationCID: L2CAPChannelID(rawValue: source), sourceCID: cid)))
        }
    }

    private func makePeer() async throws -> (Peer, AsyncStream<L2CAPChannel>) {
        let rig = try await CentralHostRig.make()
        let handle = try await rig.peripheral.connectionComplete().0.connectionHandle
        let (accepted, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
        _ = try await rig.host.listen(psm: 0x0080, parameters: .init(mtu: 100, mps: 50, initialCredits: 2)) { continuation.yield($0) }
        return (Peer(rig: rig, handle: handle), accepted)
    }

    @Test func breachesDisconnectTheChannelWithTypedErrors() async throws {
        var (peer, accepted) = try await makePeer()
        var channels = accepted.makeAsyncIterator()

        // An SDU Length over our MTU.
        let first = try await peer.open(source: 0x0040)
        try peer.sendFrame(to: first, [200, 0, 1, 2])
        try await peer.expectDisconnection(of: first, source: 0x0040)
        let firstChannel = try #require(await channels.next())
        #expect(firstChannel.closure == .protocolViolation(.sduLongerThanMTU(length: 200, mtu: 100)))

        // A K-frame past the two credits given (the SDUs are not read, so none come back).
        let second = try await peer.open(source: 0x0041)
        for index in 0..<3 { try peer.sendFrame(to: second, [1, 0, UInt8(index)]) }
        try await peer.expectDisconnection(of: second, source: 0x0041)
        let secondChannel = try #require(await channels.next())
        #expect(secondChannel.closure == .protocolViolation(.frameWithoutCredits))
        // What arrived within the credits is still read.
        #expect(try await secondChannel.read() == [0])

        // A K-frame over our MPS, and credits past 65535.
        let third = try await peer.open(source: 0x0042)
        try peer.sendFrame(to: third, [60, 0] + [UInt8](repeating: 7, count: 60))
        try await peer.expectDisconnection(of: third, source: 0x0042)
        #expect(try #require(await channels.next()).closure == .protocolViolation(.frameLongerThanMPS(length: 62, mps: 50)))
        let fourth = try await peer.open(source: 0x0043)
        peer.send(.flowControlCreditIndication(.init(cid: L2CAPChannelID(rawValue: 0x0043), credits: 65535)))
        try await peer.expectDisconnection(of: fourth, source: 0x0043)
        #expect(try #require(await channels.next()).closure == .protocolViolation(.creditOverflow))

        // Data for a CID with no channel is dropped without an answer; the link stays up and
        // the next request is answered.
        try peer.sendFrame(to: L2CAPChannelID(rawValue: 0x007E), [1, 0, 1])
        _ = try await peer.open(source: 0x0044)
        #expect(peer.rig.connection.isConnected)
        await peer.rig.host.shutdown()
    }

    @Test func requestsAreRefusedWithTheResultThatFits() async throws {
        var (peer, _) = try await makePeer()
        func request(psm: UInt16 = 0x0080, source: UInt16, mtu: UInt16 = 100, mps: UInt16 = 50) -> LESignalingCommand {
            .leCreditBasedConnectionRequest(.init(spsm: psm, sourceCID: L2CAPChannelID(rawValue: source), mtu: mtu, mps: mps, initialCredits: 1))
        }
        #expect(try await peer.exchange(request(psm: 0x0090, source: 0x0040)) == .leCreditBasedConnectionResponse(.refused(.spsmNotSupported)))
        #expect(try await peer.exchange(request(source: 0x0004)) == .leCreditBasedConnectionResponse(.refused(.invalidSourceCID)))
        #expect(try await peer.exchange(request(source: 0x0040, mtu: 22)) == .leCreditBasedConnectionResponse(.refused(.unacceptableParameters)))
        let cid = try await peer.open(source: 0x0040)
        #expect(try await peer.exchange(request(source: 0x0040)) == .leCreditBasedConnectionResponse(.refused(.sourceCIDAlreadyAllocated)))
        // The peer closes the channel; a disconnection for a CID we do not have is rejected.
        #expect(try await peer.exchange(.disconnectionRequest(.init(destinationCID: cid, sourceCID: L2CAPChannelID(rawValue: 0x0040))))
            == .disconnectionResponse(.init(destinationCID: cid, sourceCID: L2CAPChannelID(rawValue: 0x0040))))
        #expect(try await peer.exchange(.disconnectionRequest(.init(destinationCID: cid, sourceCID: L2CAPChannelID(rawValue: 0x0040))))
            == .commandReject(.invalidCID(localCID: cid, remoteCID: L2CAPChannelID(rawValue: 0x0040))))
        // A server that needs encryption refuses an unencrypted link with no bond.
        _ = try await peer.rig.host.listen(psm: 0x0081, security: .encrypted) { _ in }
        #expect(try await peer.exchange(request(psm: 0x0081, source: 0x0041)) == .leCreditBasedConnectionResponse(.refused(.insufficientAuthentication)))
        await peer.rig.host.shutdown()
    }

    /// Our enhanced request answered out of bounds (Core 6.0, Vol 3, Part A, 4.26: MTU at
    /// least 64, MPS 64…65533, each destination CID 0x0000 or a dynamic LE CID, used once, no
    /// more than requested): the open fails with a protocol violation, and every channel the
    /// peer claims to have accepted is disconnected, never left open on its side.
    @Test func enhancedResponsesOutOfBoundsAreViolationsAndAcceptedChannelsAreDisconnected() async throws {
        let (peer, _) = try await makePeer()
        let dynamic = [0x0050, 0x0051].map { L2CAPChannelID(rawValue: $0) }
        let cases: [(String, L2CAPCreditBasedConnectionResponse, [L2CAPChannelID])] = [
            ("MPS 65534", .init(mtu: 100, mps: 65534, initialCredits: 3, result: .success, destinationCIDs: dynamic), dynamic),
            ("MPS 63", .init(mtu: 100, mps: 63, initialCredits: 3, result: .success, destinationCIDs: dynamic), dynamic),
            ("MTU 63", .init(mtu: 63, mps: 64, initialCredits: 3, result: .success, destinationCIDs: dynamic), dynamic),
            ("a fixed CID", .init(mtu: 100, mps: 64, initialCredits: 3, result: .success,
                                  destinationCIDs: [dynamic[0], L2CAPChannelID(rawValue: 0x0004)]), [dynamic[0]]),
            ("the same CID twice", .init(mtu: 100, mps: 64, initialCredits: 3, result: .success,
                                         destinationCIDs: [dynamic[0], dynamic[0]]), [dynamic[0], dynamic[0]]),
            ("more CIDs than requested", .init(mtu: 100, mps: 64, initialCredits: 3, result: .success,
                                               destinationCIDs: dynamic + [L2CAPChannelID(rawValue: 0x0052)]), dynamic),
        ]
        for (name, response, claimed) in cases {
            let rig = peer.rig
            let open = Task { try await rig.host.openEnhancedChannels(psm: 0x0080, count: 2, on: rig.connection, parameters: .init(mtu: 64, mps: 64)) }
            let request = try await peer.nextPacket()
            guard case let .creditBasedConnectionRequest(sent) = try request.command, sent.sourceCIDs.count == 2 else {
                Issue.record("\(name): expected an enhanced connection request for two channels, got \(request)")
                return
            }
            peer.send(.creditBasedConnectionResponse(response), identifier: request.identifier)
            do {
                let opened = try await open.value
                Issue.record("\(name): opened \(opened.count) channels, expected a protocol violation")
            } catch let error as L2CAPChannelError {
                guard case let .host(.protocolViolation(text)) = error else {
                    Issue.record("\(name): \(error), expected a protocol violation")
                    continue
                }
                #expect(text.contains("enhanced"), "\(name): \(text)")
            }
            // Each channel the peer says it accepted is closed from our side.
            for (index, destination) in claimed.enumerated() {
                #expect(try await peer.next() == .disconnectionRequest(.init(destinationCID: destination, sourceCID: sent.sourceCIDs[index])),
                        "\(name)")
            }
            #expect(rig.host.channels(on: rig.connection).isEmpty, "\(name)")
            #expect(rig.connection.isConnected, "\(name): the link stays")
        }
        await peer.rig.host.shutdown()
    }

    @Test func enhancedRequestsOpenUpToFiveChannels() async throws {
        var (peer, accepted) = try await makePeer()
        let sources = [0x0050, 0x0051, 0x0050].map { L2CAPChannelID(rawValue: $0) }
        let answer = try await peer.exchange(.creditBasedConnectionRequest(.init(spsm: 0x0080, mtu: 64, mps: 64, initialCredits: 3, sourceCIDs: sources)))
        guard case let .creditBasedConnectionResponse(response) = answer else {
            Issue.record("expected a credit-based connection response, got \(answer)")
            return
        }
        // Two opened, the repeated source refused with its own result.
        #expect(response.result == .sourceCIDAlreadyAllocated)
        #expect(response.destinationCIDs.count == 3 && response.destinationCIDs[2] == .null)
        #expect(response.destinationCIDs[0].isLEDynamic && response.destinationCIDs[1].isLEDynamic)
        #expect(response.mtu == 100 && response.mps == 64)
        var channels = accepted.makeAsyncIterator()
        let channel = try #require(await channels.next())
        #expect(channel.isEnhanced && channel.peerMTU == 64)
        // Data flows on it like on any credit-based channel.
        try peer.sendFrame(to: response.destinationCIDs[0], [2, 0, 0xAB, 0xCD])
        #expect(try await channel.read() == [0xAB, 0xCD])
        // Reading it gives the credit back, naming our CID (Core 6.0, Vol 3, Part A, 4.24).
        #expect(try await peer.next() == .flowControlCreditIndication(.init(cid: channel.localCID, credits: 1)))
        // Reconfiguration (Vol 3, Part A, 4.27): the MTU may grow, not shrink; CIDs must be ours.
        func reconfigure(mtu: UInt16, mps: UInt16, _ cids: [L2CAPChannelID]) -> LESignalingCommand {
            .creditBasedReconfigureRequest(.init(mtu: mtu, mps: mps, destinationCIDs: cids))
        }
        #expect(try await peer.exchange(reconfigure(mtu: 200, mps: 100, [sources[0]])) == .creditBasedReconfigureResponse(.init(result: .success)))
        #expect(channel.peerMTU == 200 && channel.peerMPS == 100)
        #expect(try await peer.exchange(reconfigure(mtu: 100, mps: 100, [sources[0]]))
            == .creditBasedReconfigureResponse(.init(result: .mtuReductionNotAllowed)))
        #expect(try await peer.exchange(reconfigure(mtu: 300, mps: 64, [sources[0], sources[1]]))
            == .creditBasedReconfigureResponse(.init(result: .mpsReductionNotAllowed)))
        #expect(try await peer.exchange(reconfigure(mtu: 300, mps: 100, [L2CAPChannelID(rawValue: 0x0077)]))
            == .creditBasedReconfigureResponse(.init(result: .invalidDestinationCID)))
        #expect(channel.peerMTU == 200)
        // Six channels, or an MTU under 64, are invalid parameters.
        let six = (0x0060...0x0065).map { L2CAPChannelID(rawValue: UInt16($0)) }
        #expect(try await peer.exchange(.creditBasedConnectionRequest(.init(spsm: 0x0080, mtu: 64, mps: 64, initialCredits: 3, sourceCIDs: six)))
            == .creditBasedConnectionResponse(.init(mtu: 0, mps: 0, initialCredits: 0, result: .invalidParameters,
                                                    destinationCIDs: six.map { _ in .null })))
        await peer.rig.host.shutdown()
    }
}
