@testable import Bluejay
import BluetoothCore
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// What the callback API's requests need of the app's callback queue: only their completions
/// run there. A background task's requests complete while the app holds the queue (an app may
/// wait on its callback queue for a background task's result).
@Suite("Requests and the callback queue", .timeLimit(.minutes(1)))
struct CallbackQueueTests {
    @Test("A background task's requests complete while the app holds its callback queue")
    func backgroundTaskDoesNotWaitForTheCallbackQueue() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:42")
        let queue = DispatchQueue(label: "held")
        let bluejay = try await startBluejay(on: link) { $0.callbackQueue = queue }
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))

        // The app holds its callback queue until the background task has read (or 10 s pass).
        let held = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        let readWhileHeld = Mutex<Bool?>(nil)
        queue.async {
            holding.signal()
            readWhileHeld.withLock { $0 = held.wait(timeout: .now() + 10) == .success }
        }
        holding.wait()
        let result: RunResult<UInt8> = try await callback(timeout: .seconds(20)) { done in
            bluejay.run(backgroundTask: { synchronized -> UInt8 in
                defer { held.signal() }
                return try synchronized.read(from: HeartRate.bodySensorLocation)
            }, completionOnMainThread: { done($0) })
        }
        #expect((try? result.get()) == 1)
        #expect(readWhileHeld.withLock { $0 } == true, "the read completed while the callback queue was held")
        await bluejay.stop()
        await peripheral.shutdown()
    }
}
