import BluetoothHost
import Foundation

/// Work that runs after every connection Bluejay makes (requested, auto-reconnected or
/// restored), before anything else in the queue and before the connection is announced
/// (LittleBluetooth's connection tasks): authenticate, configure, read what the app needs.
/// It throws to refuse the connection: Bluejay then disconnects (an expected disconnection,
/// no auto-reconnect) and the connect fails with the task's ``BluejayError``, or
/// ``BluejayError/connectionTaskFailed(task:reason:)`` for an error of the app's own.
public typealias ConnectionTask = @Sendable (ConnectedPeripheral) async throws -> Void

/// Names a registered ``ConnectionTask`` so that it can be removed.
public struct ConnectionTaskID: Hashable, Sendable {
    let value: UInt64
}

/// The peripheral as a ``ConnectionTask`` sees it: reads and writes that run at once (the
/// connection holds the queue while its tasks run), each with the operation time limit.
public struct ConnectedPeripheral: Sendable {
    let link: PeripheralLink
    let timeLimit: Duration?
    let clock: BluetoothClock

    public var identifier: PeripheralIdentifier { link.identifier }
    /// The negotiated ATT MTU.
    public var attMTU: Int { link.mtu }

    public func read<R: Receivable>(from characteristic: CharacteristicIdentifier) async throws(BluejayError) -> R {
        let data = try await perform("read \(characteristic)") { try await link.read(characteristic) }
        return try Result<Data, BluejayError>.success(data).decoded().get()
    }

    public func write<S: Transmittable>(to characteristic: CharacteristicIdentifier, value: S, type: WriteType = .withResponse) async throws(BluejayError) {
        let data = value.toBluetoothData()
        try await perform("write to \(characteristic)") { try await link.write(data, to: characteristic, type: type) }
    }

    private func perform<T: Sendable>(_ operation: String, _ body: @escaping @Sendable () async throws -> T) async throws(BluejayError) -> T {
        do {
            return try await withTimeLimit(timeLimit, clock: clock, operation: operation, body)
        } catch {
            throw BluejayError(error, peripheral: link.identifier, operation: operation)
        }
    }
}

extension Bluejay {
    /// Registers a task to run after every connection, after those registered before it.
    @discardableResult
    public func addConnectionTask(named name: String, _ task: @escaping ConnectionTask) -> ConnectionTaskID {
        state.withLock { state in
            state.nextConnectionTaskID += 1
            let id = ConnectionTaskID(value: state.nextConnectionTaskID)
            state.connectionTasks.append(RegisteredConnectionTask(id: id, name: name, task: task))
            return id
        }
    }

    /// Removes a connection task (a connection running it now finishes it).
    public func removeConnectionTask(_ id: ConnectionTaskID) {
        state.withLock { $0.connectionTasks.removeAll { $0.id == id } }
    }

    /// Runs the connection tasks on a new link, in order; the first that throws ends them.
    func runConnectionTasks(on link: PeripheralLink) async throws(BluejayError) {
        let tasks = state.withLock { $0.connectionTasks }
        let peripheral = ConnectedPeripheral(link: link, timeLimit: operationTimeLimit, clock: clock)
        for registered in tasks {
            log(.info, "connection task \"\(registered.name)\" on \(link.identifier)")
            do {
                try await registered.task(peripheral)
            } catch let error as BluejayError {
                throw error
            } catch is CancellationError {
                throw .cancelled
            } catch {
                throw .connectionTaskFailed(task: registered.name, reason: "\(error)")
            }
        }
    }
}

/// A connection task as kept in the engine state.
struct RegisteredConnectionTask: Sendable {
    var id: ConnectionTaskID
    var name: String
    var task: ConnectionTask
}
