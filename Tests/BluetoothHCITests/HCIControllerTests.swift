import BluetoothCore
import BluetoothTransport
import Synchronization
import Testing
@testable import BluetoothHCI

/// `HCIController` against a scripted controller (``FakeTransport``).
@Suite(.timeLimit(.minutes(1))) struct HCIControllerCommandTests {
    static let version = ReadLocalVersionInformationCommand.ReturnParameters(
        hciVersion: 0x0D, hciSubversion: 0x1234, lmpVersion: 0x0D, companyIdentifier: 0x05F1, lmpSubversion: 0x5678)

    func makeController(commandTimeout: Duration = .seconds(5), respond: @escaping FakeTransport.Responder = { _ in [] })
        -> (HCIController, FakeTransport) {
        let transport = FakeTransport(respond: respond)
        let controller = HCIController(transport: transport, commandTimeout: commandTimeout)
        controller.start()
        return (controller, transport)
    }

    @Test func commandCompleteReturnsTheDecodedReturnParameters() async throws {
        let (controller, transport) = makeController { packet in
            packet.commandOpcode == ReadLocalVersionInformationCommand.opcode
                ? [.complete(ReadLocalVersionInformationCommand.self, Self.version)] : []
        }
        let version = try await withTimeout { try await controller.send(ReadLocalVersionInformationCommand()) }
        #expect(version == Self.version)
        #expect(transport.written.items == [H4Packet(.command, ReadLocalVersionInformationCommand().encode())])
    }

    @Test func nonZeroStatusInCommandCompleteThrowsCommandFailed() async throws {
        let (controller, _) = makeController { packet in
            [.complete(ReadBDADDRCommand.opcode, returnParameters: [HCIStatus.commandDisallowed.rawValue])]
        }
        await #expect(throws: HCIError.commandFailed(ReadBDADDRCommand.opcode, .commandDisallowed)) {
            _ = try await withTimeout { try await controller.send(ReadBDADDRCommand()) }
        }
    }

    @Test func commandStatusAcknowledgesACommandThatReportsLater() async throws {
        let (controller, _) = makeController { packet in
            packet.commandOpcode == DisconnectCommand.opcode ? [.status(DisconnectCommand.opcode)] : []
        }
        _ = try await withTimeout { try await controller.send(DisconnectCommand(connectionHandle: 0x40)) }
    }

    @Test func nonZeroStatusInCommandStatusThrowsCommandFailed() async throws {
        let (controller, _) = makeController { _ in [.status(DisconnectCommand.opcode, .unknownConnectionIdentifier)] }
        await #expect(throws: HCIError.commandFailed(DisconnectCommand.opcode, .unknownConnectionIdentifier)) {
            _ = try await withTimeout { try await controller.send(DisconnectCommand(connectionHandle: 0x40)) }
        }
    }

    @Test func truncatedReturnParametersThrowMalformedResponse() async throws {
        let (controller, _) = makeController { _ in [.complete(ReadBDADDRCommand.opcode, returnParameters: [0x00, 0x11, 0x22])] }
        let error = await #expect(throws: HCIError.self) {
            _ = try await withTimeout { try await controller.send(ReadBDADDRCommand()) }
        }
        guard case let .malformedResponse(opcode, _)? = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
        #expect(opcode == ReadBDADDRCommand.opcode)
    }

    @Test func emptyReturnParametersThrowMalformedResponse() async throws {
        let (controller, _) = makeController { _ in [.complete(ResetCommand.opcode, returnParameters: [])] }
        let error = await #expect(throws: HCIError.self) {
            _ = try await withTimeout { try await controller.send(ResetCommand()) }
        }
        guard case .malformedResponse(ResetCommand.opcode, _)? = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
    }

    @Test func commandStatusForACommandWithReturnParametersIsMalformed() async throws {
        let (controller, _) = makeController { _ in [.status(ReadBDADDRCommand.opcode)] }
        let error = await #expect(throws: HCIError.self) {
            _ = try await withTimeout { try await controller.send(ReadBDADDRCommand()) }
        }
        guard case .malformedResponse(ReadBDADDRCommand.opcode, _)? = error else {
            Issue.record("expected malformedResponse, got \(String(describing: error))")
            return
        }
    }

    @Test func aTimedOutCommandGivesItsCreditBackSoLaterCommandsStillGo() async throws {
        // The controller never answers Reset; it answers everything else.
        let (controller, transport) = makeController { packet in
            packet.commandOpcode == ResetCommand.opcode ? [] : [.complete(ReadLocalVersionInformationCommand.self, Self.version)]
        }
        await #expect(throws: HCIError.commandTimeout(ResetCommand.opcode)) {
            _ = try await withTimeout { try await controller.send(ResetCommand(), timeout: .milliseconds(100)) }
        }
        let version = try await withTimeout { try await controller.send(ReadLocalVersionInformationCommand()) }
        #expect(version == Self.version)
        #expect(transport.written.items.commandOpcodes == [ResetCommand.opcode, ReadLocalVersionInformationCommand.opcode])
    }

    @Test func evenAnImmediateTimeoutFires() async throws {
        // However short the timeout, the timer must not fire before the command is registered.
        let (controller, _) = makeController { _ in [] }
        for _ in 0..<100 {
            await #expect(throws: HCIError.commandTimeout(ResetCommand.opcode)) {
                try await withTimeout("the command with no time", .seconds(10)) { try await controller.send(ResetCommand(), timeout: .zero) }
            }
        }
    }

    @Test func aCommandWaitingBehindAnUnansweredOneIsSentWhenThatOneTimesOut() async throws {
        let (controller, transport) = makeController { packet in
            packet.commandOpcode == ResetCommand.opcode ? [] : [.complete(ReadLocalVersionInformationCommand.self, Self.version)]
        }
        let reset = Task { try await controller.send(ResetCommand(), timeout: .milliseconds(200)) }
        _ = try #require(await transport.written.wait(forCount: 1))
        let version = Task { try await controller.send(ReadLocalVersionInformationCommand()) }
        await #expect(throws: HCIError.commandTimeout(ResetCommand.opcode)) { try await withTimeout { try await reset.value } }
        #expect(try await withTimeout { try await version.value } == Self.version)
        #expect(transport.written.items.commandOpcodes == [ResetCommand.opcode, ReadLocalVersionInformationCommand.opcode])
    }

    @Test func cancellingACommandInFlightThrowsCancelledAndFreesItsCredit() async throws {
        let (controller, transport) = makeController { packet in
            packet.commandOpcode == ResetCommand.opcode ? [] : [.complete(ReadLocalVersionInformationCommand.self, Self.version)]
        }
        let reset = Task { try await controller.send(ResetCommand()) }
        _ = try #require(await transport.written.wait(forCount: 1))
        reset.cancel()
        await #expect(throws: HCIError.cancelled) { try await withTimeout { try await reset.value } }
        #expect(try await withTimeout { try await controller.send(ReadLocalVersionInformationCommand()) } == Self.version)
    }

    @Test func aCommandFromAnAlreadyCancelledTaskIsNotSent() async throws {
        let (controller, transport) = makeController { packet in
            [.complete(ReadLocalVersionInformationCommand.self, Self.version)]
        }
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await controller.send(ResetCommand())
        }
        await #expect(throws: HCIError.cancelled) { try await withTimeout("the cancelled command", .seconds(10)) { try await cancelled.value } }
        #expect(try await withTimeout { try await controller.send(ReadLocalVersionInformationCommand()) } == Self.version)
        #expect(transport.written.items.commandOpcodes == [ReadLocalVersionInformationCommand.opcode])
    }

    @available(macOS 26, *)
    @Test func cancellingACommandWaitingForCreditsRemovesIt() async throws {
        let (controller, transport) = makeController { packet in [] }
        let reset = Task { try await controller.send(ResetCommand()) }
        _ = try #require(await transport.written.wait(forCount: 1))
        // An immediate task runs until it waits: the command is queued behind Reset.
        let waiting = Task.immediate { try await controller.send(ReadBDADDRCommand()) }
        waiting.cancel()
        await #expect(throws: HCIError.cancelled) { try await withTimeout("the waiting command", .seconds(10)) { try await waiting.value } }
        // When Reset is answered, the cancelled command is not sent.
        transport.respond { _ in [.complete(ReadLocalVersionInformationCommand.self, Self.version)] }
        transport.deliver([.complete(ResetCommand.opcode, returnParameters: [0])])
        _ = try await withTimeout { try await reset.value }
        #expect(try await withTimeout { try await controller.send(ReadLocalVersionInformationCommand()) } == Self.version)
        #expect(transport.written.items.commandOpcodes == [ResetCommand.opcode, ReadLocalVersionInformationCommand.opcode])
    }

    @Test func zeroCreditsHoldTheNextCommand() async throws {
        let (controller, transport) = makeController { packet in
            [.complete(ResetCommand.opcode, returnParameters: [0], credits: 0)]
        }
        _ = try await withTimeout { try await controller.send(ResetCommand()) }
        // The controller accepts no command now: this one may not be written; it times out.
        await #expect(throws: HCIError.commandTimeout(ReadBDADDRCommand.opcode)) {
            _ = try await withTimeout { try await controller.send(ReadBDADDRCommand(), timeout: .milliseconds(150)) }
        }
        #expect(transport.written.items.commandOpcodes == [ResetCommand.opcode])
    }

    @available(macOS 26, *)
    @Test func aNoOperationCommandCompleteReleasesTheHeldCommand() async throws {
        let (controller, transport) = makeController { packet in
            [.complete(ResetCommand.opcode, returnParameters: [0], credits: 0)]
        }
        _ = try await withTimeout { try await controller.send(ResetCommand()) }
        transport.respond { _ in [.complete(ReadLocalVersionInformationCommand.self, Self.version)] }
        // An immediate task runs until it waits: the command is queued, and not written.
        let version = Task.immediate { try await controller.send(ReadLocalVersionInformationCommand()) }
        #expect(transport.written.count == 1)
        transport.deliver([.complete(.noOperation, returnParameters: [], credits: 1)])
        #expect(try await withTimeout { try await version.value } == Self.version)
        #expect(transport.written.items.commandOpcodes == [ResetCommand.opcode, ReadLocalVersionInformationCommand.opcode])
    }

    @Test func severalCreditsLetSeveralCommandsBeOutstanding() async throws {
        let (controller, transport) = makeController { packet in
            [.complete(ResetCommand.opcode, returnParameters: [0], credits: 3)]
        }
        _ = try await withTimeout { try await controller.send(ResetCommand()) }
        transport.respond { _ in [] }
        let tasks = (0..<4).map { _ in Task { try await controller.send(ReadLocalVersionInformationCommand()) } }
        // Three go out at once, without any answer; the fourth waits.
        let written = try #require(await transport.written.wait(forCount: 4))
        #expect(written.commandOpcodes.filter { $0 == ReadLocalVersionInformationCommand.opcode }.count == 3)
        transport.respond { _ in [.complete(ReadLocalVersionInformationCommand.self, Self.version, credits: 1)] }
        // Answering one releases the fourth; answering everything finishes them all.
        for _ in 0..<3 { transport.deliver([.complete(ReadLocalVersionInformationCommand.self, Self.version, credits: 1)]) }
        for task in tasks { #expect(try await withTimeout { try await task.value } == Self.version) }
        #expect(transport.written.count == 5)
    }
}

@Suite(.timeLimit(.minutes(1))) struct HCIControllerTransportClosedTests {
    @Test func closingFailsPendingCommandsAndQueuedACLAndEndsInbound() async throws {
        let transport = FakeTransport()
        let controller = HCIController(transport: transport)
        controller.start()
        let inbound = recordInbound(of: controller)
        controller.configureACLBuffers(dataLength: 27, count: 1)

        let inFlight = Task { try await controller.send(ResetCommand()) }
        _ = try #require(await transport.written.wait(forCount: 1))
        let waiting = Task { try await controller.send(ReadBDADDRCommand()) }

        let aclResults = AwaitableLog<Result<Void, HCIError>>()
        controller.sendACL(connectionHandle: 0x40, pdu: [0x01, 0x00, 0x04, 0x00, 0xAA]) { aclResults.append($0) }
        controller.sendACL(connectionHandle: 0x40, pdu: [0x01, 0x00, 0x04, 0x00, 0xBB]) { aclResults.append($0) }
        let firstACL = try #require(await aclResults.wait(forCount: 1))
        #expect((try? firstACL[0].get()) != nil, "the first PDU had a buffer")

        let failure = TransportError.connectionLost("fake", reason: "unplugged")
        transport.fail(failure)

        await #expect(throws: HCIError.transportClosed(failure)) { try await withTimeout { try await inFlight.value } }
        await #expect(throws: HCIError.transportClosed(failure)) { try await withTimeout { try await waiting.value } }
        let results = try #require(await aclResults.wait(forCount: 2))
        guard case .failure(.transportClosed(failure)) = results[1] else {
            Issue.record("queued ACL: \(results[1])")
            return
        }
        let items = try #require(await inbound.wait { $0.contains(where: \.isTransportClosed) })
        guard case .transportClosed(failure)? = items.last else {
            Issue.record("inbound ended with \(String(describing: items.last))")
            return
        }
        #expect(controller.isClosed)

        // Everything afterwards fails at once.
        await #expect(throws: HCIError.transportClosed(failure)) { try await withTimeout { try await controller.send(ResetCommand()) } }
        await #expect(throws: HCIError.transportClosed(failure)) {
            try await withTimeout { try await controller.sendACL(connectionHandle: 0x40, pdu: [0, 0, 4, 0]) }
        }
    }

    @Test func inboundFinishesAfterTransportClosed() async throws {
        let transport = FakeTransport()
        let controller = HCIController(transport: transport)
        controller.start()
        transport.deliver(.unknown(code: 0xFE, parameters: [1]))
        controller.close()
        let items: [HCIInbound] = try await withTimeout {
            var items: [HCIInbound] = []
            for await item in controller.inbound { items.append(item) }
            return items
        }
        #expect(items.count == 2)
        #expect(items.first?.receivedEvent == .unknown(code: 0xFE, parameters: [1]))
        guard case .transportClosed(nil)? = items.last else {
            Issue.record("last inbound item: \(String(describing: items.last))")
            return
        }
    }
}

@Suite(.timeLimit(.minutes(1))) struct HCIControllerACLTests {
    func makeController(dataLength: Int = 27, buffers: Int) -> (HCIController, FakeTransport, AwaitableLog<HCIInbound>) {
        let transport = FakeTransport()
        let controller = HCIController(transport: transport)
        controller.start()
        let inbound = recordInbound(of: controller)
        controller.configureACLBuffers(dataLength: dataLength, count: buffers)
        return (controller, transport, inbound)
    }

    /// Waits until the controller has handled everything delivered before: an unknown event
    /// goes through the same queue and comes out on `inbound` after them.
    func barrier(_ transport: FakeTransport, _ inbound: AwaitableLog<HCIInbound>, _ tag: UInt8) async throws {
        transport.deliver(.unknown(code: 0xFE, parameters: [tag]))
        _ = try #require(await inbound.wait { $0.contains { $0.receivedEvent == .unknown(code: 0xFE, parameters: [tag]) } })
    }

    @Test func pdusAreCutToTheControllerDataLength() async throws {
        let (controller, transport, _) = makeController(dataLength: 10, buffers: 8)
        let pdu = [0x15, 0x00, 0x04, 0x00] + (0..<21).map { UInt8($0) }
        controller.sendACL(connectionHandle: 0x0042, pdu: pdu, completion: nil)
        let packets = transport.written.items.aclPackets
        #expect(packets.map(\.data.count) == [10, 10, 5])
        #expect(packets.map(\.packetBoundary) == [.firstNonFlushable, .continuing, .continuing])
        #expect(packets.allSatisfy { $0.connectionHandle == 0x0042 })
        #expect(packets.flatMap(\.data) == pdu)
    }

    @Test func completedPacketsReleaseQueuedFragments() async throws {
        let (controller, transport, inbound) = makeController(dataLength: 4, buffers: 2)
        let pdu: [UInt8] = [0x10, 0x00, 0x04, 0x00] + Array(1...16) // five fragments
        let results = AwaitableLog<Result<Void, HCIError>>()
        controller.sendACL(connectionHandle: 1, pdu: pdu) { results.append($0) }
        #expect(transport.written.count == 2)

        transport.deliver([.completedPackets(handle: 1, count: 1)])
        try await barrier(transport, inbound, 1)
        #expect(transport.written.count == 3)
        #expect(results.count == 0)

        transport.deliver([.completedPackets(handle: 1, count: 2)])
        let all = try #require(await results.wait(forCount: 1))
        #expect((try? all[0].get()) != nil)
        #expect(transport.written.items.aclPackets.flatMap(\.data) == pdu)
        #expect(transport.maximumACLOutstanding <= 2)
    }

    @Test func completedPacketsForAnotherConnectionFreeNothing() async throws {
        let (controller, transport, inbound) = makeController(dataLength: 27, buffers: 1)
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0], completion: nil)
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0], completion: nil)
        transport.deliver([.completedPackets(handle: 2, count: 1)])
        try await barrier(transport, inbound, 1)
        #expect(transport.written.count == 1)
        transport.deliver([.completedPackets(handle: 1, count: 1)])
        _ = try #require(await transport.written.wait(forCount: 2))
    }

    @Test("waitUntilDelivered returns once every packet queued for the link before it is reported completed, not before, whatever follows; at once for an idle link, and when the link or the transport ends")
    func waitUntilDeliveredFollowsCompletedPackets() async throws {
        let (controller, transport, inbound) = makeController(dataLength: 4, buffers: 1)
        // An idle link: at once.
        try await withTimeout { await controller.waitUntilDelivered(connectionHandle: 1) }

        controller.sendACL(connectionHandle: 1, pdu: [0x04, 0x00, 0x06, 0x00, 1, 2, 3, 4], completion: nil) // two fragments
        let delivered = AwaitableLog<String>()
        let waiting = Task {
            await controller.waitUntilDelivered(connectionHandle: 1)
            delivered.append("link 1")
        }
        #expect(await eventually { controller.deliveryWaiterCount(connectionHandle: 1) == 1 }, "the wait registered")
        // Queued after the call: it does not hold the wait up (a busy link is never idle).
        controller.sendACL(connectionHandle: 1, pdu: [0x00, 0x00, 0x06, 0x00], completion: nil)
        transport.deliver([.completedPackets(handle: 1, count: 1)]) // the first; the second goes out now
        transport.deliver([.completedPackets(handle: 2, count: 1)]) // another link's
        try await barrier(transport, inbound, 1)
        #expect(delivered.count == 0, "one fragment still in flight")
        transport.deliver([.completedPackets(handle: 1, count: 1)])
        #expect(await delivered.wait(forCount: 1) == ["link 1"], "the later PDU is still in flight")
        await waiting.value

        // The link ends with a packet in flight: the wait ends with it.
        controller.sendACL(connectionHandle: 1, pdu: [0x00, 0x00, 0x06, 0x00], completion: nil)
        let ended = Task { await controller.waitUntilDelivered(connectionHandle: 1) }
        transport.deliver(.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: 1, reason: .remoteUserTerminatedConnection)))
        try await withTimeout { await ended.value }

        // The transport closes with a packet in flight on another link.
        controller.sendACL(connectionHandle: 3, pdu: [0x00, 0x00, 0x06, 0x00], completion: nil)
        let closed = Task { await controller.waitUntilDelivered(connectionHandle: 3) }
        transport.fail(.connectionLost("fake", reason: "unplugged"))
        try await withTimeout { await closed.value }
    }

    @Test func disconnectionFailsQueuedPDUsAndFreesTheConnectionsBuffers() async throws {
        let (controller, transport, inbound) = makeController(dataLength: 27, buffers: 2)
        let results = AwaitableLog<(String, Result<Void, HCIError>)>()
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0]) { results.append(("a", $0)) }
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0]) { results.append(("b", $0)) }
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0]) { results.append(("c", $0)) }
        controller.sendACL(connectionHandle: 2, pdu: [0, 0, 4, 0]) { results.append(("d", $0)) }
        #expect(transport.written.count == 2)

        let disconnection = HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: 1, reason: .remoteUserTerminatedConnection))
        transport.deliver(disconnection)
        let items = try #require(await inbound.wait { $0.contains { $0.receivedEvent == disconnection } })
        #expect(items.compactMap(\.receivedEvent) == [disconnection])
        let all = try #require(await results.wait(forCount: 4))
        let byName = Dictionary(all.map { ($0.0, $0.1) }, uniquingKeysWith: { first, _ in first })
        guard case .failure(.connectionClosed(connectionHandle: 1))? = byName["c"] else {
            Issue.record("c: \(String(describing: byName["c"]))")
            return
        }
        // Both buffers of handle 1 are free again: handle 2's PDU went out.
        #expect((try? byName["d"]?.get()) != nil)
        #expect(transport.written.items.aclPackets.last?.connectionHandle == 2)
    }

    /// Once each such PDU took a buffer credit that never came back: after a few, all ACL
    /// traffic on every link stalled.
    @Test func dataForADisconnectedHandleIsRefusedAndTakesNoCredit() async throws {
        let (controller, transport, inbound) = makeController(dataLength: 27, buffers: 1)
        let disconnection = HCIEvent.disconnectionComplete(DisconnectionCompleteEvent(connectionHandle: 1, reason: .remoteUserTerminatedConnection))
        transport.deliver(disconnection)
        _ = try #require(await inbound.wait { $0.contains { $0.receivedEvent == disconnection } })

        let results = AwaitableLog<(String, Result<Void, HCIError>)>()
        for name in ["late 1", "late 2", "late 3"] {
            controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0]) { results.append((name, $0)) }
        }
        controller.sendACL(connectionHandle: 2, pdu: [0, 0, 4, 0]) { results.append(("live", $0)) }
        let all = try #require(await results.wait(forCount: 4))
        for (name, result) in all where name.hasPrefix("late") {
            guard case .failure(.connectionClosed(connectionHandle: 1)) = result else {
                Issue.record("\(name): \(result)")
                continue
            }
        }
        #expect(all.contains { $0.0 == "live" && (try? $0.1.get()) != nil }, "the one buffer was still free")
        #expect(transport.written.items.aclPackets.map(\.connectionHandle) == [2])

        // A new link on the same handle takes data again.
        let reopened = HCIEvent.le(.connectionComplete(LEConnectionCompleteEvent(
            status: .success, connectionHandle: 1, role: .central, peerAddressType: .random, peerAddress: .zero,
            connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 500, centralClockAccuracy: .ppm500)))
        transport.deliver(reopened)
        _ = try #require(await inbound.wait { $0.contains { $0.receivedEvent == reopened } })
        transport.deliver([H4Packet.completedPackets(handle: 2, count: 1)])
        try await barrier(transport, inbound, 1)
        controller.sendACL(connectionHandle: 1, pdu: [0, 0, 4, 0]) { results.append(("new link", $0)) }
        let after = try #require(await results.wait(forCount: 5))
        #expect(after.contains { $0.0 == "new link" && (try? $0.1.get()) != nil })
    }

    /// Few buffers: most fragments go out when credits come back; many: straight from the submitters.
    @Test(arguments: [2, 64])
    func writeOrderIsKeptAcrossManyConcurrentSubmitters(buffers: Int) async throws {
        let (controller, transport, _) = makeController(dataLength: 5, buffers: buffers)
        // The controller frees each buffer once it has the packet.
        transport.respond { packet in
            guard let acl = packet.aclPacket else { return [] }
            return [.completedPackets(handle: acl.connectionHandle, count: 1)]
        }
        let submitters = 8, perSubmitter = 30
        try await withTimeout("the submitters", .seconds(20)) {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for submitter in 0..<submitters {
                    group.addTask {
                        for sequence in 0..<perSubmitter {
                            // L2CAP length 9: submitter, sequence and 7 filler bytes, cut into three fragments.
                            let payload = [UInt8(submitter), UInt8(sequence)] + [UInt8](repeating: UInt8(submitter), count: 7)
                            try await controller.sendACL(connectionHandle: UInt16(0x40 + submitter % 2), pdu: [9, 0, 0x40, 0] + payload)
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        let packets = transport.written.items.aclPackets
        #expect(packets.count == submitters * perSubmitter * 3)
        #expect(transport.maximumACLOutstanding <= buffers)

        // Reassembled per connection, every PDU is whole and each submitter's PDUs come in order.
        var reassembler = ACLReassembler()
        var nextSequence = [Int](repeating: 0, count: submitters)
        for packet in packets {
            guard let pdu = try reassembler.append(packet) else { continue }
            let submitter = Int(pdu[4]), sequence = Int(pdu[5])
            #expect(pdu.count == 13)
            #expect(pdu[6...].allSatisfy { Int($0) == submitter }, "PDU of submitter \(submitter) is mixed with another")
            #expect(UInt16(0x40 + submitter % 2) == packet.connectionHandle)
            #expect(sequence == nextSequence[submitter], "submitter \(submitter) out of order")
            nextSequence[submitter] = sequence + 1
        }
        #expect(nextSequence == [Int](repeating: perSubmitter, count: submitters))
    }

    @Test func fragmentedIncomingACLIsReassembledIntoWholePDUs() async throws {
        let (_, transport, inbound) = makeController(buffers: 1)
        let first: [UInt8] = [0x06, 0x00, 0x04, 0x00, 0x0A, 0x01, 0x02, 0x03, 0x04, 0x05]
        let second: [UInt8] = [0x02, 0x00, 0x04, 0x00, 0xEE, 0xFF]
        func acl(_ handle: UInt16, _ boundary: ACLPacketBoundary, _ data: ArraySlice<UInt8>) -> H4Packet {
            H4Packet(.acl, ACLDataPacket(connectionHandle: handle, packetBoundary: boundary, data: Array(data)).encode())
        }
        transport.deliver([
            acl(0x40, .firstFlushable, first[0..<1]), // not even the length yet
            acl(0x41, .firstFlushable, second[0..<3]),
            acl(0x40, .continuing, first[1..<6]),
            acl(0x41, .continuing, second[3...]),
            acl(0x40, .continuing, first[6...]),
        ])
        let items = try #require(await inbound.wait { $0.compactMap(\.receivedPDU).count >= 2 })
        let pdus = items.compactMap(\.receivedPDU)
        #expect(pdus.map(\.handle) == [0x41, 0x40])
        #expect(pdus.map(\.pdu) == [second, first])
    }

    @Test func malformedEventsAndACLAreDroppedAndTheControllerCarriesOn() async throws {
        let (controller, transport, inbound) = makeController(buffers: 1)
        transport.deliver([
            H4Packet(.event, [0x0E, 0x02, 0x01]), // Command Complete, length disagrees
            H4Packet(.event, [0x0E]), // truncated header
            H4Packet(.event, [0x13, 0x01, 0x01]), // Number Of Completed Packets with a missing entry
            H4Packet(.acl, [0x40, 0x00, 0x05, 0x00, 0x01]), // ACL length disagrees
            H4Packet(.acl, ACLDataPacket(connectionHandle: 0x40, packetBoundary: .continuing, data: [1, 2]).encode()), // continuation without start
            H4Packet(.acl, ACLDataPacket(connectionHandle: 0x40, packetBoundary: .firstFlushable, data: [1, 0, 4, 0, 1, 2]).encode()), // overflow
            H4Packet(.sco, [0x00, 0x00, 0x00]),
        ])
        try await barrier(transport, inbound, 7)
        #expect(inbound.items.compactMap(\.receivedEvent) == [.unknown(code: 0xFE, parameters: [7])])
        #expect(inbound.items.compactMap(\.receivedPDU).isEmpty)
        transport.respond { _ in [.complete(ResetCommand.opcode, returnParameters: [0])] }
        _ = try await withTimeout { try await controller.send(ResetCommand()) }
    }

    @Test func unknownAndOrdinaryEventsArePassedOnInOrder() async throws {
        let (_, transport, inbound) = makeController(buffers: 1)
        let hardwareError = HCIEvent.hardwareError(HardwareErrorEvent(hardwareCode: 3))
        transport.deliver(.unknown(code: 0xF0, parameters: [0xDE, 0xAD]))
        transport.deliver(hardwareError)
        transport.deliver([.completedPackets(handle: 0x40, count: 1)])
        transport.deliver(.unknown(code: 0x57, parameters: []))
        let items = try #require(await inbound.wait { $0.count >= 3 })
        // Flow-control events are consumed; everything else comes up in order.
        #expect(items.compactMap(\.receivedEvent) == [.unknown(code: 0xF0, parameters: [0xDE, 0xAD]), hardwareError, .unknown(code: 0x57, parameters: [])])
    }
}

/// The bounds of ``HCILimits``: each queue refuses or drops at its limit, and says so.
@Suite(.timeLimit(.minutes(1))) struct HCIControllerLimitTests {
    /// A transport whose packets the test hands to the controller itself, on its own thread.
    final class DirectTransport: HCITransport {
        let name = "direct"
        private let receiver = Mutex<(@Sendable (TransportEvent) -> Void)?>(nil)
        func start(receiver: @escaping @Sendable (TransportEvent) -> Void) { self.receiver.withLock { $0 = receiver } }
        func send(_ packet: H4Packet) throws(TransportError) {}
        func close() {}
        func deliver(_ event: TransportEvent) { receiver.withLock { $0 }?(event) }
    }

    @Test func aFullSendQueueFailsThePDUWithSendQueueFull() async throws {
        let transport = FakeTransport()
        var limits = HCILimits()
        limits.aclQueuedBytesPerConnection = 100
        let controller = HCIController(transport: transport, limits: limits)
        controller.start()
        // No buffers yet: everything queues. A 32-byte PDU is two ACL packets of 27 + 5 data
        // bytes, 40 bytes with their headers: the queue takes two, and refuses the next two
        // at once, as a peer that keeps asking while its link never drains would make it.
        let results = AwaitableLog<Result<Void, HCIError>>()
        for _ in 0..<4 { controller.sendACL(connectionHandle: 1, pdu: [0x1C, 0x00, 0x04, 0x00] + Array(repeating: 0, count: 28)) { results.append($0) } }
        #expect(results.count == 2)
        #expect(results.items.allSatisfy { result in
            if case .failure(.sendQueueFull(connectionHandle: 1)) = result { return true }
            return false
        })
        #expect(controller.refusedACLCount == 2)
        // Another link is not affected, and the queue drains as buffers come.
        controller.sendACL(connectionHandle: 2, pdu: [0, 0, 4, 0]) { results.append($0) }
        controller.configureACLBuffers(dataLength: 27, count: 8)
        let all = try #require(await results.wait(forCount: 5))
        #expect(all.dropFirst(2).allSatisfy { (try? $0.get()) != nil })
    }

    @available(macOS 26, *)
    @Test func commandsPastTheWaitingLimitAreRefused() async throws {
        let transport = FakeTransport { _ in [] }
        var limits = HCILimits()
        limits.waitingCommands = 3
        let controller = HCIController(transport: transport, limits: limits)
        controller.start()
        // The controller never answers: one command is in flight and three wait (an
        // immediate task runs until it waits, so each is queued when the next starts)...
        let tasks = (0..<4).map { _ in Task.immediate { try await controller.send(ReadBDADDRCommand()) } }
        #expect(transport.written.count == 1)
        // ...so the fifth is refused at once.
        await #expect(throws: HCIError.commandQueueFull(ReadBDADDRCommand.opcode)) {
            _ = try await controller.send(ReadBDADDRCommand())
        }
        #expect(transport.written.count == 1)
        tasks.forEach { $0.cancel() }
        for task in tasks { _ = await task.result }
    }

    @Test func anInboundStreamNobodyReadsDropsPastItsLimit() async throws {
        let transport = DirectTransport()
        var limits = HCILimits()
        limits.inboundItems = 4
        let controller = HCIController(transport: transport, limits: limits)
        controller.start()
        for tag in UInt8(0)..<10 {
            transport.deliver(.packets([H4Packet(.event, HCIEvent.unknown(code: 0xFE, parameters: [tag]).encode())]))
        }
        transport.deliver(.closed(nil))
        #expect(controller.droppedInboundCount == 7)
        var received: [HCIInbound] = []
        for await item in controller.inbound { received.append(item) }
        #expect(received.compactMap(\.receivedEvent) == (0..<4).map { HCIEvent.unknown(code: 0xFE, parameters: [$0]) })
    }
}
