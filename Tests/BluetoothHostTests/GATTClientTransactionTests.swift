import BluetoothCore
import BluetoothHCI
import Testing
@testable import BluetoothHost

/// How a ``GATTClient``'s requests end when the peer misbehaves, the link drops, or the
/// caller gives up, against ``ScriptedATTServer``.
@Suite(.timeLimit(.minutes(1))) struct GATTClientTransactionTests {
    /// The server answers nothing about `handle`.
    func silence(on handle: UInt16, _ server: ScriptedATTServer) {
        server.script { request in
            if case let .readRequest(read) = request, read.handle == handle { return .silence }
            return .standard
        }
    }

    @Test func aTransactionTimeoutClosesTheBearer() async throws {
        // On a manual clock: a loaded machine's pause must not be a transaction timeout.
        let clock = ManualClock()
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), transactionTimeout: .milliseconds(200),
                                                         clock: .manual(clock))
        let (values, valuesTask) = collect(try await withTimeout { try await client.subscribe(to: SampleDatabase.measurementCharacteristic) })
        defer { valuesTask.cancel() }
        silence(on: 0x0012, server)
        let unanswered = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        let queued = Task { try await client.readValue(handle: 0x0003) }
        let sent = clock.now
        #expect(await eventually { clock.nextDeadline == sent + .milliseconds(200) }, "the transaction's timer")
        clock.advance(by: .milliseconds(199))
        #expect(server.linkCloses.count == 0, "not before the transaction timeout")
        clock.advance(by: .milliseconds(1))

        await #expect(throws: HostError.attTransactionTimeout) { try await withTimeout { try await unanswered.value } }
        // The one behind it failed with it, or, if it came too late, found the bearer closed.
        let queuedError = await #expect(throws: HostError.self) { try await withTimeout { try await queued.value } }
        #expect(queuedError == .attTransactionTimeout || queuedError == .attBearerClosed)
        _ = try #require(await server.linkCloses.wait(forCount: 1))

        // Subscriptions end with the timeout; later requests find the bearer closed.
        let ended = try #require(await values.wait(forCount: 1)).last
        #expect(ended?.error as? HostError == .attTransactionTimeout)
        await #expect(throws: HostError.attBearerClosed) { try await withTimeout { try await client.readValue(handle: 0x0003) } }
        await #expect(throws: HostError.attBearerClosed) {
            try await withTimeout { _ = try await client.subscribe(to: SampleDatabase.customValue) }
        }
        #expect(!server.requests.contains(.readRequest(.init(handle: 0x0003))), "nothing is sent after the timeout")
        #expect(server.linkCloses.count == 1)
    }

    @Test func aCallersDeadlineLetsItGoWhileTheRequestKeepsTheBearer() async throws {
        let clock = ManualClock()
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), clock: .manual(clock))
        silence(on: 0x0012, server)
        let start = BluetoothClock.manual(clock).now
        let late = Task {
            try await RequestScope.$current.withValue(RequestScope(deadline: start + .seconds(2))) { try await client.readValue(handle: 0x0012) }
        }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        // Queued behind it, with a later deadline.
        let queued = Task {
            try await RequestScope.$current.withValue(RequestScope(deadline: start + .seconds(5))) { try await client.readValue(handle: 0x0003) }
        }
        try await withTimeout { try await clock.waitForSleepingTasks(1) }
        clock.advance(by: .milliseconds(1999))
        #expect(clock.sleepingTaskCount == 1, "the one watchdog still waits")
        clock.advance(by: .milliseconds(1))
        await #expect(throws: HostError.deadlineExceeded) { try await withTimeout { try await late.value } }
        // The abandoned request still holds the bearer (Core 6.0, Vol 3, Part F, 3.3.2): its
        // late response lets the queued one go out.
        #expect(!server.requests.contains(.readRequest(.init(handle: 0x0003))))
        server.push(.readResponse(.init(value: [1])))
        #expect(try await withTimeout { try await queued.value }.isEmpty == false)
        // A deadline already past fails at once, without a request.
        await #expect(throws: HostError.deadlineExceeded) {
            try await RequestScope.$current.withValue(RequestScope(deadline: start)) { try await client.readValue(handle: 0x0003) }
        }
        #expect(server.requests.filter { $0 == .readRequest(.init(handle: 0x0003)) }.count == 1)
    }

    @Test func anAbortedScopeLetsItsCallerGoAtOnceWhileTheRequestKeepsTheBearer() async throws {
        struct Aborted: Error, Equatable {}
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        silence(on: 0x0012, server)
        let abort = AbortSignal()
        let waiting = Task {
            try await RequestScope.$current.withValue(RequestScope(abort: abort)) { try await client.readValue(handle: 0x0012) }
        }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        let queued = Task { try await client.readValue(handle: 0x0003) }
        abort.abort(with: Aborted())
        await #expect(throws: Aborted()) { try await withTimeout { try await waiting.value } }
        // The abandoned request still holds the bearer (Core 6.0, Vol 3, Part F, 3.3.2).
        #expect(!server.requests.contains(.readRequest(.init(handle: 0x0003))))
        server.push(.readResponse(.init(value: [1])))
        #expect(try await withTimeout { try await queued.value }.isEmpty == false)
        // A request made in a scope already aborted fails at once, without going out.
        await #expect(throws: Aborted()) {
            try await RequestScope.$current.withValue(RequestScope(abort: abort)) { try await client.readValue(handle: 0x0003) }
        }
        #expect(server.requests.filter { $0 == .readRequest(.init(handle: 0x0003)) }.count == 1)
    }

    @Test func aLateResponseAfterTheTimeoutIsIgnored() async throws {
        let clock = ManualClock()
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), transactionTimeout: .milliseconds(100),
                                                         clock: .manual(clock))
        silence(on: 0x0012, server)
        let unanswered = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        #expect(await eventually { clock.nextDeadline == .milliseconds(100) }, "the transaction's timer")
        clock.advance(by: .milliseconds(100))
        await #expect(throws: HostError.attTransactionTimeout) { try await withTimeout { try await unanswered.value } }
        server.push(.readResponse(.init(value: [1])))
        await #expect(throws: HostError.attBearerClosed) { try await withTimeout { try await client.readValue(handle: 0x0003) } }
    }

    @Test func connectionDidCloseFailsEverythingAtOnceWithItsError() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), transactionTimeout: .seconds(30))
        let (values, valuesTask) = collect(try await withTimeout { try await client.subscribe(to: SampleDatabase.measurementCharacteristic) })
        defer { valuesTask.cancel() }
        let (all, allTask) = collect(client.notifications())
        defer { allTask.cancel() }
        let (changes, changesTask) = collect(client.serviceChanges())
        defer { changesTask.cancel() }
        silence(on: 0x0012, server)
        let running = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        let queued = (0..<3).map { _ in Task { try await client.readValue(handle: 0x0003) } }

        let error = HostError.disconnected(reason: .connectionTimeout)
        client.connectionDidClose(error: error)
        await #expect(throws: error) { try await withTimeout("the running request", .seconds(10)) { try await running.value } }
        for task in queued {
            await #expect(throws: error) { try await withTimeout("the queued request", .seconds(10)) { try await task.value } }
        }
        #expect(try #require(await values.wait(forCount: 1)).last?.error as? HostError == error)
        #expect(try #require(await all.wait(forCount: 1)).last?.isEnd == true)
        #expect(try #require(await changes.wait(forCount: 1)).last?.isEnd == true)

        await #expect(throws: error) { try await withTimeout { try await client.readValue(handle: 0x0003) } }
        await #expect(throws: error) { try await withTimeout { try await client.writeWithoutResponse([1], handle: 0x0015) } }
        let lateTap = client.notifications()
        let (late, lateTask) = collect(lateTap)
        defer { lateTask.cancel() }
        #expect(try #require(await late.wait(forCount: 1)).first?.isEnd == true)
        #expect(!server.requests.contains(.readRequest(.init(handle: 0x0003))))
        #expect(server.linkCloses.count == 0)
    }

    @Test func aMalformedResponseEndsTheRequestInsteadOfStalling() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), transactionTimeout: .seconds(30))
        // A Read By Group Type Response whose entries do not fit its length field.
        server.script { request in
            if case .readByGroupTypeRequest = request { return .bytes([0x11, 0x06, 0x01, 0x00]) }
            return .standard
        }
        let error = await #expect(throws: HostError.self) {
            try await withTimeout("the discovery", .seconds(10)) { try await client.discoverAllPrimaryServices() }
        }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
        // The bearer goes on.
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == Array("Bluejay".utf8))
    }

    @Test func aMalformedErrorResponseEndsTheRequestToo() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make(), transactionTimeout: .seconds(30))
        server.script { request in request.isReadRequest ? .bytes([0x01, 0x0A]) : .standard }
        let error = await #expect(throws: HostError.self) { try await withTimeout("the read", .seconds(10)) { try await client.readValue(handle: 0x0003) } }
        guard case .protocolViolation? = error else {
            Issue.record("expected protocolViolation, got \(String(describing: error))")
            return
        }
    }

    @Test func unrelatedPDUsDoNotEndTheOutstandingRequest() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        silence(on: 0x0012, server)
        let read = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        server.push(.writeResponse(.init()))
        server.push(.errorResponse(.init(requestOpcode: .writeRequest, handle: 0x0012, code: .writeNotPermitted)))
        server.push([0x1B, 0x12]) // a truncated notification
        server.push([0xFF, 0x00]) // an opcode nobody knows
        server.push(.readResponse(.init(value: [0x07])))
        #expect(try await withTimeout { try await read.value } == [0x07])
    }

    @Test func cancellingAQueuedRequestRemovesItFromTheQueue() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        silence(on: 0x0012, server)
        let outstanding = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        let queued = Task { try await client.readValue(handle: 0x0005) }
        queued.cancel()
        await #expect(throws: HostError.cancelled) { try await withTimeout { try await queued.value } }

        server.push(.readResponse(.init(value: [0x01])))
        #expect(try await withTimeout { try await outstanding.value } == [0x01])
        #expect(try await withTimeout { try await client.readValue(handle: 0x0003) } == Array("Bluejay".utf8))
        #expect(!server.requests.contains(.readRequest(.init(handle: 0x0005))), "the cancelled request was never sent")
    }

    @Test func cancellingTheOutstandingRequestWaitsForItsResponseBeforeTheNext() async throws {
        let (client, server) = ScriptedATTServer.connect(database: SampleDatabase.make())
        silence(on: 0x0012, server)
        let outstanding = Task { try await client.readValue(handle: 0x0012) }
        _ = try #require(await server.waitForSent { $0 == .readRequest(.init(handle: 0x0012)) })
        let next = Task { try await client.readValue(handle: 0x0003) }
        outstanding.cancel()
        await #expect(throws: HostError.cancelled) { try await withTimeout { try await outstanding.value } }
        // The late answer to the cancelled request is not taken for the next one's.
        server.push(.readResponse(.init(value: [0xAA])))
        #expect(try await withTimeout { try await next.value } == Array("Bluejay".utf8))
        #expect(server.requests == [.readRequest(.init(handle: 0x0012)), .readRequest(.init(handle: 0x0003))])
    }
}
