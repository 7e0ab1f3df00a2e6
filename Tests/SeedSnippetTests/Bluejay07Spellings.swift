// Bluejay 0.7's spellings, which Bluejay keeps as deprecated names (renamed to 0.8's).
//
// A use of a deprecated name warns, and the project's build allows no warning in Tests/. A
// deprecated declaration may use deprecated names without a warning, so the 0.7 code lives
// in deprecated methods that the tests reach through a protocol (`Bluejay07Scenario`): the
// 0.7 names are compiled (they exist, with the parameters 0.7's README uses) and run, and
// nothing outside this file refers to a deprecated name. That each is deprecated, with the
// right new name, is not checked here (it is in the declarations, Sources/Bluejay/Compatibility).
import Bluejay
import BluetoothSimulator
import Foundation
import TestSupport

/// What the tests call: a non-deprecated requirement that the 0.7 code implements.
protocol Bluejay07Scenario {
    func run(simulator: Simulator, device: SimulatedDevice, bluejay: Bluejay, queue: DispatchQueue) async throws -> Bluejay07Outcome
}

/// What the 0.7 code saw.
struct Bluejay07Outcome {
    var restoredValue: UInt8?
    var flushed = false
    var enableIdentifier: String?
    var enableWithListenRestorerIdentifier: String?
    var enableWithListenRestorerHasRestorer = false
}

/// A 0.7 connection observer: its peripheral type is `Peripheral`.
final class Bluejay07Observer: ConnectionObserver, @unchecked Sendable {
    var connections: [String] = []

    @available(*, deprecated, message: "0.7's `Peripheral` on purpose")
    func connected(to peripheral: Peripheral) {
        connections.append("connected \(peripheral.description)")
    }

    @available(*, deprecated, message: "0.7's `Peripheral` on purpose")
    func disconnected(from peripheral: Peripheral) {
        connections.append("disconnected \(peripheral.description)")
    }
}

/// 0.8's listen restorer, which 0.7's `.enableWithListenRestorer` takes.
final class Bluejay07ListenRestorer: ListenRestorer {
    func didReceiveUnhandledListen(from peripheral: PeripheralIdentifier, on characteristic: CharacteristicIdentifier,
                                   with value: Data?) -> ListenRestoreAction {
        .promiseRestoration
    }
}

struct Bluejay07Port: Bluejay07Scenario {
    let observer: Bluejay07Observer

    @available(*, deprecated, message: "written with Bluejay 0.7's names on purpose: they must keep compiling")
    func run(simulator: Simulator, device: SimulatedDevice, bluejay: Bluejay, queue: DispatchQueue) async throws -> Bluejay07Outcome {
        var outcome = Bluejay07Outcome()

        // register(observer:) / unregister(observer:)
        let batteryLabel = Bluejay07Observer()
        bluejay.register(observer: batteryLabel)
        bluejay.unregister(observer: batteryLabel)
        bluejay.register(observer: observer)

        try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))

        // restoreListen(to:completion:)
        let restored = AwaitableValue<UInt8>()
        bluejay.restoreListen(to: heartRate, completion: { (result: ReadResult<UInt8>) in
            switch result {
            case .success(let value):
                restored.set(value)
            case .failure(let error):
                debugPrint("Listen failed with error: \(error.localizedDescription)")
            }
        })
        _ = await eventually { await !device.subscribers(of: "2A37").isEmpty }
        _ = try await device.notify([72], on: "2A37")
        outcome.restoredValue = await restored.value(timeout: .seconds(10))

        // flushListen(to:idleWindow:completion:) in a background task
        let flushed = AwaitableValue<Bool>()
        bluejay.run(backgroundTask: { peripheral in
            var didFlush = false
            try peripheral.flushListen(to: Characteristics.rigadoRX, idleWindow: 0.2, completion: {
                didFlush = true
            })
            return didFlush
        }, completionOnMainThread: { (result: RunResult<Bool>) in
            flushed.set((try? result.get()) ?? false)
        })
        outcome.flushed = await flushed.value(timeout: .seconds(10)) ?? false

        // BackgroundRestoreMode's 0.7 constructors
        let startOptions = StartOptions(
          enableBluetoothAlert: true,
          backgroundRestore: .enable("com.steamclock.bluejay")
        )
        if case .enable(let config) = startOptions.backgroundRestore { outcome.enableIdentifier = config.restoreIdentifier }
        let restorer = Bluejay07ListenRestorer()
        let withListenRestorer = StartOptions(
          enableBluetoothAlert: true,
          backgroundRestore: .enableWithListenRestorer("com.steamclock.bluejay", restorer)
        )
        if case .enable(let config) = withListenRestorer.backgroundRestore {
            outcome.enableWithListenRestorerIdentifier = config.restoreIdentifier
            outcome.enableWithListenRestorerHasRestorer = config.listenRestorer === restorer
        }
        return outcome
    }
}

/// One value, set from a callback and awaited by the test.
final class AwaitableValue<Value: Sendable>: Sendable {
    private let log = AwaitableLog<Value>()

    func set(_ value: Value) { log.append(value) }

    func value(timeout: Duration) async -> Value? {
        await log.wait(forCount: 1, timeout: timeout)?.first
    }
}
