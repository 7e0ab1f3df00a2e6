@testable import Bluejay
import BluetoothCore
import BluetoothVirtual
import Foundation
import Synchronization
import Testing

/// Where the callback API's operations run: on the callback queue (one thread handoff per
/// request, as for the `async` API), except a background task's, whose thread waits for them
/// while the app may hold its callback queue.
@Suite("Callback API operations on the callback queue", .timeLimit(.minutes(1)))
struct CallbackQueueExecutionTests {
    private static let marker = DispatchSpecificKey<String>()

    /// A serial queue that says its name to code running on it.
    private static func markedQueue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: marker, value: name)
        return queue
    }

    private static var currentQueue: String? { DispatchQueue.getSpecific(key: marker) }

    /// Reads the body sensor location, then says which marked queue it resumed on.
    private struct ReadThenLocate: PeripheralOperation {
        func start(on peripheral: OperationPeripheral) async throws -> String {
            let _: UInt8 = try await peripheral.read(from: HeartRate.bodySensorLocation)
            return CallbackQueueExecutionTests.currentQueue ?? "another thread"
        }
    }

    @Test("An operation queued with the callback API resumes on the callback queue after its requests; awaited, it does not")
    func callbackOperationsRunOnTheCallbackQueue() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:41")
        let bluejay = try await startBluejay(on: link) { $0.callbackQueue = Self.markedQueue("callbacks") }
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))

        let viaCallback: Result<String, BluejayError> = try await callback { done in bluejay.run(ReadThenLocate()) { done($0) } }
        #expect(viaCallback == .success("callbacks"))
        // Awaited, the operation belongs to the caller's world, not the callback queue's.
        let awaited = try await bluejay.run(ReadThenLocate())
        #expect(awaited == "another thread")

        let read: ReadResult<UInt8> = try await callback { done in
            bluejay.read(from: HeartRate.bodySensorLocation) { result in
                #expect(Self.currentQueue == "callbacks", "the completion is on the callback queue")
                done(result)
            }
        }
        #expect(read == .success(1))
        await bluejay.stop()
        await peripheral.shutdown()
    }

    @Test("A background task's requests complete while the app holds its callback queue")
    func backgroundTaskDoesNotWaitForTheCallbackQueue() async throws {
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D0:00:00:00:00:42")
        let queue = Self.markedQueue("held")
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
