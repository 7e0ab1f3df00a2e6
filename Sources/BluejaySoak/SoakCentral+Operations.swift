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
            try await bluejay.disconnect()
        case .reconnect:
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
            let characteristic = state.withLock { Bool.random(using: &$0.random) } ? SoakIdentifiers.notifying : SoakIdentifiers.indicating
            try await bluejay.endListen(to: characteristic)
        case .readRSSI:
            _ = try await bluejay.rssi()
        case .restart, .recover:
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

    /// Listens to one of the numbered characteristics and checks the numbers in a task of
    /// its own until the listen ends (end listen, a newer listen, an expected disconnection,
    /// Bluejay stopping).
    private func listen() async throws {
        let characteristic = state.withLock { Bool.random(using: &$0.random) } ? SoakIdentifiers.notifying : SoakIdentifiers.indicating
        let values: ValueStream<NumberedValue> = try await bluejay.listen(to: characteristic, multipleListenOption: .replaceable)
        let epoch = context.ledger.beginEpoch(central: name, characteristic: characteristic.description, disconnections: disconnections)
        context.tasks.spawn("\(name) listen consumer") {
            do {
                for try await value in values { epoch.receive(value) }
            } catch {
                // A value that is not a numbered one ends the stream: it was counted as an error of the listen.
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
