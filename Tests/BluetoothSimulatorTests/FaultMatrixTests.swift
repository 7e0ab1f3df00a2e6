@testable import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothSimulator
import BluetoothTransport
import Foundation
import Synchronization
import Testing

/// The fault matrix of issue 10 on the virtual controller: each fault while each GATT
/// procedure is in flight ends the procedure with a typed error (with Bluejay's and the
/// host's timers on a manual clock nobody moves, so "within its limit" means without any
/// time passing, unless the row is about a timeout); the FIFO queue moves on; then
/// auto-reconnect brings back the listen, and numbered notifications sent after the
/// reconnection arrive once each, in order.
///
/// The faults land at an exact point: ``InterposedTransport`` holds back the procedure's
/// ATT PDU and runs the fault then, so the PDU is in flight whatever the machine's speed.
@Suite("Fault matrix on the virtual controller", .timeLimit(.minutes(1)))
struct FaultMatrixTests {
    // MARK: The rows

    enum Procedure: String, CaseIterable, Sendable {
        case discovery, read, longRead, longWrite, cccdWrite, indication
    }

    enum Fault: String, CaseIterable, Sendable {
        /// The radio link drops (Connection Timeout, 0x08).
        case linkDrop
        /// The controller hits a hardware error and resets; its links end (Hardware Failure, 0x03).
        case controllerReset
        /// The transport to the controller breaks while the host writes.
        case transportClosed
    }

    struct Row: Sendable, CustomTestStringConvertible {
        var procedure: Procedure
        var fault: Fault
        var testDescription: String { "\(fault.rawValue) during \(procedure.rawValue)" }
    }

    static let rows = Fault.allCases.flatMap { fault in Procedure.allCases.map { Row(procedure: $0, fault: fault) } }

    @Test("A fault during a GATT procedure: a typed error at once, the queue moves on, the listen comes back, no notification lost or repeated",
          arguments: rows)
    func faultDuringProcedure(_ row: Row) async throws {
        try await run(row)
    }

    func run(_ row: Row) async throws {
        try await withMatrix { matrix in
            let bluejay = matrix.bluejay
            let peripheral = matrix.device.peripheralIdentifier
            let (trigger, run) = try await matrix.prepare(row.procedure)
            let faultReason: HCIStatus = row.fault == .controllerReset ? .hardwareFailure : .connectionTimeout
            // The fault waits until the read below is queued: a procedure whose PDU goes out from
            // the calling thread (a callback request begun without a task) would otherwise fire
            // it, and Bluejay could handle the link's loss, before that read is queued; the read
            // would then wait for the auto-reconnection and succeed on the new link.
            let readQueued = TestGate()
            matrix.transport.arm(opcodes: trigger.opcodes, occurrence: trigger.occurrence) { [matrix] in
                Task {
                    do { try await readQueued.wait() } catch { return }
                    switch row.fault {
                    case .linkDrop: matrix.simulator.centralController().dropAllConnections(reason: .connectionTimeout)
                    case .controllerReset: matrix.simulator.centralController().simulateHardwareError()
                    case .transportClosed: matrix.transport.breakTransport()
                    }
                }
            }
            // The procedure, and an operation queued right behind it.
            let outcome = AwaitableLog<BluejayError?>()
            let next = AwaitableLog<ReadResult<Data>>()
            run(outcome)
            bluejay.read(from: Matrix.other) { next.append($0) }
            readQueued.open()

            let error = try #require(await outcome.wait(forCount: 1)?.first, "the procedure ended") ?? nil
            // With the transport gone, the host also ends the link (Hardware Failure): the
            // procedure gets whichever Bluejay hears first, both say what happened.
            let expected: [BluejayError]
            switch row.fault {
            case .linkDrop, .controllerReset: expected = [.disconnected(peripheral, reason: faultReason)]
            case .transportClosed:
                expected = [.bluetoothUnavailable("transport virtual:central lost: broken by the test"),
                            .disconnected(peripheral, reason: .hardwareFailure)]
            }
            if row.procedure == .indication {
                // The value arrived; the link went before its confirmation: the app hears of
                // the loss through its disconnect handler.
                #expect(error == nil, "\(String(describing: error))")
                try await waitUntil("the disconnect handler") { !matrix.log.disconnectErrors.isEmpty }
                let handlerError = try #require(matrix.log.disconnectErrors.first ?? nil)
                #expect(expected.contains(handlerError) || handlerError == .disconnected(peripheral, reason: .hardwareFailure), "\(handlerError)")
            } else {
                #expect(error.map { expected.contains($0) } == true, "\(String(describing: error))")
            }
            #expect(matrix.clock.now == matrix.start, "no time passed on Bluejay's clock")
            // The queue moved on: the read queued behind the procedure ended too, with a typed
            // error (an indication is not a queued operation: the read may have run before it).
            let behind = try #require(await next.wait(forCount: 1)?.first)
            if row.procedure != .indication, case .success = behind {
                Issue.record("the read queued behind the procedure should fail with the link, got \(behind)")
            }

            if row.fault == .transportClosed {
                try await matrix.restart()
            } else {
                try await matrix.waitForReconnection()
            }
            try await matrix.expectNumberedNotifications()
            // And the queue runs: the operation after the fault succeeds.
            let value: Data = try await matrix.bluejay.read(from: Matrix.other)
            #expect(value == Data([0x05]))
        }
    }

    // MARK: Lost, delayed and vanished packets

    enum PacketFault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The request is lost three times and retransmitted: it succeeds, late.
        case lost
        /// The answer comes after the operation's limit: a timeout; the late answer is matched
        /// to its own request and the next read gets its own value.
        case delayedPastTheLimit
        /// The request vanishes: the operation times out, then the ATT transaction timeout
        /// closes the link, and auto-reconnect brings it back.
        case vanished
        var testDescription: String { rawValue }
    }

    @Test("Lost, delayed and vanished packets during a read", arguments: PacketFault.allCases)
    func packetFaults(_ fault: PacketFault) async throws {
        try await withMatrix { matrix in
            let bluejay = matrix.bluejay
            let peripheral = matrix.device.peripheralIdentifier
            _ = try await bluejay.read(from: Matrix.short) as Data
            let first = AwaitableLog<ReadResult<Data>>()
            let second = AwaitableLog<ReadResult<Data>>()
            switch fault {
            case .lost:
                #expect(try matrix.device.injectACLFault(.lose(attempts: 3), direction: .incoming) == 1)
                bluejay.read(from: Matrix.short) { first.append($0) }
                bluejay.read(from: Matrix.other) { second.append($0) }
                #expect(await first.wait(forCount: 1)?.first == .success(Data([0x01])))
                #expect(await second.wait(forCount: 1)?.first == .success(Data([0x05])))
                #expect(matrix.clock.now == matrix.start)
            case .delayedPastTheLimit:
                // The peripheral holds its answer until the test opens the gate.
                bluejay.read(from: Matrix.held) { first.append($0) }
                bluejay.read(from: Matrix.other) { second.append($0) }
                try await matrix.gate.waitForArrivals(1)
                matrix.clock.advance(by: Matrix.operationLimit - .milliseconds(1))
                #expect(first.count == 0, "the limit is \(Matrix.operationLimit)")
                matrix.clock.advance(by: .milliseconds(1))
                let late = await first.wait(forCount: 1)?.first
                #expect(late == .failure(.timedOut(operation: "read \(Matrix.held)", after: Matrix.operationLimit)), "\(String(describing: late))")
                #expect(second.count == 0, "the next read waits for the late answer")
                matrix.gate.open()
                #expect(await second.wait(forCount: 1)?.first == .success(Data([0x05])), "its own value, not the late one")
            case .vanished:
                #expect(try matrix.device.injectACLFault(.drop, direction: .incoming) == 1)
                let reads = matrix.transport.sentATT.items.filter { $0 == 0x0A }.count
                bluejay.read(from: Matrix.short) { first.append($0) }
                bluejay.read(from: Matrix.other) { second.append($0) }
                // The request left (and vanishes on the air): its limits count from now.
                _ = await matrix.transport.sentATT.wait { $0.filter { $0 == 0x0A }.count > reads }
                matrix.clock.advance(by: Matrix.operationLimit)
                let lost = await first.wait(forCount: 1)?.first
                #expect(lost == .failure(.timedOut(operation: "read \(Matrix.short)", after: Matrix.operationLimit)), "\(String(describing: lost))")
                // The ATT transaction timeout, 30 s after the request.
                matrix.clock.advance(by: .seconds(30) - Matrix.operationLimit - .milliseconds(1))
                #expect(second.count == 0)
                matrix.clock.advance(by: .milliseconds(1))
                let failed = await second.wait(forCount: 1)?.first
                #expect(failed == .failure(.peripheralNotResponding) || failed == .failure(.disconnected(peripheral, reason: .connectionTerminatedByLocalHost)),
                        "\(String(describing: failed))")
                try await matrix.waitForReconnection()
                try await matrix.expectNumberedNotifications()
            }
            let value: Data = try await bluejay.read(from: Matrix.short)
            #expect(value == Data([0x01]))
        }
    }

    // MARK: A controller that stops answering commands

    @Test("A controller that stops answering commands: disconnect and connect fail at the command timeout, the queue moves on, and once it answers again both work")
    func silentController() async throws {
        try await withMatrix { matrix in
            let bluejay = matrix.bluejay
            let peripheral = matrix.device.peripheralIdentifier
            matrix.transport.silenceCommands(true)
            let disconnected = AwaitableLog<DisconnectionResult>()
            let next = AwaitableLog<ReadResult<Data>>()
            bluejay.disconnect { disconnected.append($0) }
            bluejay.read(from: Matrix.other) { next.append($0) }
            try await waitUntil("the Disconnect command swallowed") { matrix.transport.commandsSwallowed == 1 }
            matrix.clock.advance(by: Matrix.commandTimeout - .milliseconds(1))
            #expect(disconnected.count == 0, "the command timeout is \(Matrix.commandTimeout)")
            matrix.clock.advance(by: .milliseconds(1))
            let result = try #require(await disconnected.wait(forCount: 1)?.first)
            guard case .failure(.host(.hci(.commandTimeout))) = result else {
                Issue.record("expected the command timeout, got \(result)")
                return
            }
            // Still connected; the queue moved on to the read, which needs no command.
            #expect(await next.wait(forCount: 1)?.first == .success(Data([0x05])))
            #expect(bluejay.isConnected)

            // The controller answers again. (Within the host's ghost lifetime, 5 s, the retry's
            // own answer would be taken for the late answer of the command that timed out: see
            // CommandFlowControl. A controller that comes back later does not meet that.)
            matrix.transport.silenceCommands(false)
            matrix.clock.advance(by: .seconds(5))
            _ = try await bluejay.disconnect()
            #expect(!bluejay.isConnected)

            // Connecting to a controller that does not answer: the create-connection command
            // times out, a typed error, and nothing is left connecting.
            matrix.transport.silenceCommands(true)
            let connected = AwaitableLog<ConnectionResult>()
            bluejay.connect(peripheral, timeout: .seconds(60)) { connected.append($0) }
            try await waitUntil("the create-connection command swallowed") { matrix.transport.commandsSwallowed == 2 }
            matrix.clock.advance(by: Matrix.commandTimeout)
            let failed = try #require(await connected.wait(forCount: 1)?.first)
            guard case .failure(.host(.hci(.commandTimeout))) = failed else {
                Issue.record("expected the command timeout, got \(failed)")
                return
            }
            try await waitUntil("Bluejay idle") { !bluejay.isConnecting && bluejay.runner.count == 0 }

            matrix.transport.silenceCommands(false)
            matrix.clock.advance(by: .seconds(5))
            _ = try await bluejay.connect(peripheral, timeout: .seconds(60))
            #expect(try await bluejay.read(from: Matrix.other) as Data == Data([0x05]))
        }
    }
}
