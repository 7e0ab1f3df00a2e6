import Bluejay
import Foundation
import Synchronization

// `BluejayGuestApp --reconnect --hci bluez --name NAME`: auto-reconnect and listen restore over
// the backend, for the BlueZ guest test. It connects, listens to the heart rate with a callback
// (the seeds' API), and after the first value writes the body sensor location (9) so the test
// knows it arrived. The test then drops the link from the peripheral's side: Bluejay connects
// again on its own and turns the listen on again, and the second value reaches the same
// callback. Steps: `ready`, `found`, `connected`, `notification` (each), `disconnected`
// (with `will_reconnect`), `connected` again, `disconnecting`; a failure prints `error`.

enum GuestReconnect {
    static func run(_ bluejay: Bluejay) async throws {
        let name = option("--name", default: "Bluejay Peer 2")
        let peripheral = try await findPeripheral(named: name, with: bluejay)

        let events = bluejay.connectionEvents()
        let watcher = Task {
            for await event in events {
                switch event {
                case .connected, .autoConnected: emit("connected")
                case let .disconnected(_, error, willReconnect):
                    emit("disconnected", ["will_reconnect": willReconnect, "error": error.map { "\($0)" } ?? ""])
                default: continue
                }
            }
        }
        defer { watcher.cancel() }
        try await bluejay.connect(peripheral, timeout: .seconds(30))

        let values = Mutex<[String]>([])
        let (done, finish) = AsyncStream.makeStream(of: Void.self)
        bluejay.listen(to: heartRate) { (result: ReadResult<Data>) in
            guard case let .success(value) = result else { return }
            let hex = value.map { String(format: "%02x", $0) }.joined()
            let count = values.withLock { values in
                values.append(hex)
                return values.count
            }
            emit("notification", ["value": hex])
            if count == 1 { bluejay.write(to: bodySensorLocation, value: UInt8(9)) { _ in } }
            if count == 2 { finish.finish() }
        }
        // Bounded: the test's own steps take well under a minute.
        let ended = await within(.seconds(90)) { () async -> Bool? in
            for await _ in done {}
            return true
        } ?? false
        guard ended else { throw AppFailure(description: "only \(values.withLock { $0.count }) of 2 notifications within 90 s") }
        emit("disconnecting")
        try await bluejay.disconnect()
    }
}
