import Bluejay
import BluetoothCore
import BluetoothHost
import Foundation

extension SoakCentral {
    /// Does one operation with the Bluejay API; throws what it reports.
    func execute(_ operation: SoakOperation) async throws {
        switch operation {
        case .connect:
            let target = state.withLock { peripherals[Int.random(in: 0..<peripherals.count, using: &$0.random)] }
            try await bluejay.connect(target.identifier, timeout: .seconds(SoakSettings.connectTimeout))
        case .disconnect:
            // A disconnection the app asks for ends its listens too (Bluejay does not reconnect).
            context.audit.listensEnded(central: index, stream: nil, at: .now)
            context.audit.linkBroke(central: index, peripheral: nil, at: .now, reason: "disconnect")
            try await bluejay.disconnect()
        case .reconnect:
            context.audit.listensEnded(central: index, stream: nil, at: .now)
            context.audit.linkBroke(central: index, peripheral: nil, at: .now, reason: "reconnect")
            let peer = try await bluejay.disconnect()
            try await bluejay.connect(peer, timeout: .seconds(SoakSettings.connectTimeout))
        case .discover:
            try await discover()
        case .read:
            try await readBack(long: false)
        case .write:
            try await write(long: false, type: .withResponse)
        case .writeWithoutResponse:
            try await write(long: false, type: .withoutResponse)
        case .longRead:
            try await readBack(long: true)
        case .longWrite:
            try await write(long: true, type: .withResponse)
        case .listen:
            try await listen()
        case .endListen:
            let stream: NumberedStream = state.withLock { Bool.random(using: &$0.random) } ? .notifications : .indications
            context.audit.listensEnded(central: index, stream: stream, at: .now)
            try await bluejay.endListen(to: stream.characteristic)
        case .readRSSI:
            _ = try await bluejay.rssi()
        case .restart, .recover:
            context.audit.listensEnded(central: index, stream: nil, at: .now)
            context.audit.linkBroke(central: index, peripheral: nil, at: .now, silent: true, reason: operation.rawValue)
            await bluejay.stop()
            try await start()
        }
    }

    // MARK: Values

    private func readBack(long: Bool) async throws {
        let characteristic = long ? SoakIdentifiers.long(central: index) : SoakIdentifiers.short(central: index)
        let target = peripheral(bluejay.connectedPeripheral)
        let value: Data = try await bluejay.read(from: characteristic)
        guard let target else { return }
        let generation = target.generation
        let bytes = [UInt8](value)
        let (expected, candidates) = state.withLock { state -> (Bool, Int) in
            var expectation = (long ? state.longValues[target.index] : state.shortValues[target.index]) ?? ValueExpectation(generation: 0)
            let count = expectation.candidateCount
            let expected = expectation.read(bytes, generation: generation)
            if long { state.longValues[target.index] = expectation } else { state.shortValues[target.index] = expectation }
            return (expected, count)
        }
        note("read \(long ? "long" : "short") of \(target.name): \(bytes.count) bytes \(Hex.encode(Array(bytes.prefix(4))))")
        if !expected {
            context.statistics.integrityViolation(
                "\(name) read \(bytes.count) bytes [\(Hex.encode(Array(bytes.prefix(8)), separator: " "))…] from \(characteristic) of \(target.name), "
                    + "which none of the \(candidates) value(s) written could have left there; its last steps:\n      "
                    + journal.joined(separator: "\n      "))
        }
    }

    private func write(long: Bool, type: WriteType) async throws {
        let characteristic = long ? SoakIdentifiers.long(central: index) : SoakIdentifiers.short(central: index)
        let target = peripheral(bluejay.connectedPeripheral)
        // Reboot counts before the write: one after it may have undone it.
        let generations = peripherals.map(\.generation)
        let withoutResponseLimit = max(1, min(SoakIdentifiers.shortValueLimit, (bluejay.maximumWriteValueLength(for: .withoutResponse) ?? 20)))
        let bytes = state.withLock { state -> [UInt8] in
            let length: Int
            if long {
                // Longer than one Write Request carries on the peripheral's MTU, mostly.
                let single = Int(target?.mtu ?? 23) - 3
                length = Int.random(in: min(single + 1, SoakIdentifiers.longValueLimit)...SoakIdentifiers.longValueLimit, using: &state.random)
            } else {
                length = Int.random(in: 1...(type == .withoutResponse ? withoutResponseLimit : SoakIdentifiers.shortValueLimit), using: &state.random)
            }
            return state.random.bytes(length)
        }
        note("\(type == .withoutResponse ? "write without response" : "write") \(long ? "long" : "short") to \(target?.name ?? "?"): "
            + "\(bytes.count) bytes \(Hex.encode(Array(bytes.prefix(4))))")
        do {
            try await bluejay.write(to: characteristic, value: Data(bytes), type: type)
        } catch {
            // Made while not connected, it waited in the queue behind the reconnection and may
            // have reached whichever peripheral that was.
            record(bytes, on: target.map { [$0] } ?? peripherals, long: long, confirmed: false, generations: generations)
            throw error
        }
        // A write that succeeded went to the peripheral connected now (a reconnection
        // goes back to the same one).
        let reached = peripheral(bluejay.connectedPeripheral) ?? target
        record(bytes, on: reached.map { [$0] } ?? peripherals, long: long, confirmed: reached != nil && type == .withResponse,
               generations: generations)
    }

    private func record(_ value: [UInt8], on targets: [SoakPeripheral], long: Bool, confirmed: Bool, generations: [Int]) {
        state.withLock { state in
            for target in targets {
                var expectation = (long ? state.longValues[target.index] : state.shortValues[target.index]) ?? ValueExpectation(generation: 0)
                if confirmed {
                    expectation.written(value, generation: generations[target.index])
                } else {
                    expectation.maybeWritten(value)
                }
                if long { state.longValues[target.index] = expectation } else { state.shortValues[target.index] = expectation }
            }
        }
    }

    // MARK: Listening

    /// Listens to one of the numbered characteristics (replacing a listen there) and logs
    /// every value to the delivery audit, in a task of its own, until the stream ends. A stream
    /// that ends or fails without this central ending it is counted by how.
    private func listen() async throws {
        let stream: NumberedStream = state.withLock { Bool.random(using: &$0.random) } ? .notifications : .indications
        let audit = context.audit
        audit.listensEnded(central: index, stream: stream, at: .now)  // replaced, if there is one
        let listen = audit.listenRequested(central: index, stream: stream)
        let values: ValueStream<NumberedValue>
        do {
            values = try await bluejay.listen(to: stream.characteristic, multipleListenOption: .replaceable)
        } catch {
            audit.listensEnded(central: index, stream: stream, at: .now)
            throw error
        }
        audit.listenStarted(listen, at: .now)
        context.tasks.spawn("\(name) listen consumer") { [index] in
            do {
                for try await value in values {
                    audit.received(central: index, peripheral: value.peripheral, stream: stream, sequence: value.sequence, at: value.receivedAt,
                                   listen: listen)
                }
                audit.streamEnded(listen, how: "ended by the stack")
            } catch let error as BluejayError {
                audit.streamEnded(listen, how: "failed: \(SoakStatistics.type(of: error))", failure: !SoakStatistics.isLinkFailure(error))
            } catch {
                audit.streamEnded(listen, how: "failed: \(type(of: error))", failure: true)
            }
        }
    }

    // MARK: Discovery

    /// Discovers the connected peripheral's whole database on the host, beside Bluejay's
    /// queue (as another library sharing the connection would), and checks it holds the
    /// soak service with all its characteristics.
    private func discover() async throws {
        guard let peer = bluejay.connectedPeripheral, let host = bluejay.host else { throw BluejayError.notConnected }
        guard let connection = await host.connections.first(where: { $0.peer == peer.address && $0.role == .central }) else {
            throw BluejayError.notConnected
        }
        let database = try await connection.gatt.discoverDatabase()
        let service = database.first { $0.service.uuid == SoakIdentifiers.serviceUUID }
        let expectedCharacteristics = 2 + 2 * centralCount
        guard let service, service.characteristics.count == expectedCharacteristics else {
            context.statistics.integrityViolation(
                "\(name) discovered \(service.map { "\($0.characteristics.count) characteristics in" } ?? "no") soak service on \(peer), "
                    + "expected \(expectedCharacteristics)")
            return
        }
    }
}
