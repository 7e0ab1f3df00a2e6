import Bluejay
import Foundation
import Synchronization
import Testing

/// The identifiers of the rig's database, named as the Bluejay READMEs name them.
enum Peer {
    static let heartRateService = ServiceIdentifier(uuid: "180D")
    static let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
    static let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
    static let heartRateConfiguration = DescriptorIdentifier(uuid: "2902", characteristic: heartRate)
    static let deviceInfo = ServiceIdentifier(uuid: "180A")
    static let serialNumber = CharacteristicIdentifier(uuid: "2A25", service: deviceInfo)
    static let batteryService = ServiceIdentifier(uuid: "180F")
    static let batteryLevel = CharacteristicIdentifier(uuid: "2A19", service: batteryService)
    static let custom = ServiceIdentifier(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E")
    /// The module's RX: the central writes requests here.
    static let uartRX = CharacteristicIdentifier(uuid: "6E400002-B5A3-F393-E0A9-E50E24DCCA9E", service: custom)
    /// The module's TX: answers come back here, cut into notifications.
    static let uartTX = CharacteristicIdentifier(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", service: custom)
    static let writeSink = CharacteristicIdentifier(uuid: "6E400007-B5A3-F393-E0A9-E50E24DCCA9E", service: custom)
    static let dynamicService = ServiceIdentifier(uuid: "6E400101-B5A3-F393-E0A9-E50E24DCCA9E")
    static let dynamicValue = CharacteristicIdentifier(uuid: "6E400102-B5A3-F393-E0A9-E50E24DCCA9E", service: dynamicService)
    /// `bluejay_auth.py`: write a password, get 0x01 (accepted) or 0x02 on the same characteristic.
    static let authService = ServiceIdentifier(uuid: "6E400201-B5A3-F393-E0A9-E50E24DCCA9E")
    static let userAuth = CharacteristicIdentifier(uuid: "6E400202-B5A3-F393-E0A9-E50E24DCCA9E", service: authService)
    static let adminAuth = CharacteristicIdentifier(uuid: "6E400203-B5A3-F393-E0A9-E50E24DCCA9E", service: authService)
}

extension RigPeripheral {
    /// The rig's peripheral as Bluejay names it.
    func identifier() throws -> PeripheralIdentifier {
        let address = try #require(BluetoothAddress(address), "bad rig address \(address)")
        return PeripheralIdentifier(address: DeviceAddress(address, type: addressType == "public" ? .public : .random), name: name)
    }
}

extension BumbleRig {
    /// Peripheral `index` (1-based) of the rig.
    func peripheral(_ index: Int = 1) throws -> RigPeripheral {
        try #require(peripherals.first { $0.index == index }, "the rig has no peripheral \(index)")
    }
}

/// Starts the rig (with the auth plugin), a Bluejay on its controller, runs `body`, and
/// stops both, also when `body` throws. Bluejay's timers run on `clock`: a test whose subject
/// is a timeout moves a manual clock instead of racing the Python peer.
func withBluejay<T>(
    peripherals: Int = 1,
    arguments: [String] = [],
    clock: BluetoothClock = .continuous,
    options: (inout StartOptions) -> Void = { _ in },
    isolation: isolated (any Actor)? = #isolation,
    _ body: (BumbleRig, Bluejay) async throws -> T
) async throws -> T {
    try await withBumbleRig(peripherals: peripherals, arguments: ["--plugin", "bluejay_auth"] + arguments) { rig in
        let bluejay = Bluejay()
        var startOptions = StartOptions(transport: .specification(rig.transportSpecification), operationTimeout: .seconds(10))
        startOptions.hostConfiguration.clock = clock
        options(&startOptions)
        bluejay.start(mode: .new(startOptions))
        do {
            try await bluejay.waitUntilReady()
            let result = try await body(rig, bluejay)
            await bluejay.stop()
            return result
        } catch {
            await bluejay.stop()
            throw error
        }
    }
}

/// Connects and waits for the result, failing the test with the rig's diagnostics otherwise.
func connect(_ bluejay: Bluejay, to peripheral: PeripheralIdentifier, rig: BumbleRig) async throws {
    let result: ConnectionResult = try await callback(timeout: .seconds(20)) { done in
        bluejay.connect(peripheral, timeout: .seconds(15)) { done($0) }
    }
    guard case .success = result else {
        Issue.record("connecting to \(peripheral) failed: \(result)\n\(rig.diagnostics)")
        throw CancellationError()
    }
}

/// What observers, handlers and restorers were told, in order.
final class Recorder: ConnectionObserver, DisconnectHandler, ServiceObserver, ListenRestorer, BackgroundRestorer, LogObserver, Sendable {
    let events = Collected<String>()
    let logLines = Collected<String>()
    let reconnectAnswer = Mutex<AutoReconnectMode>(.noChange)
    let restoreAnswer = Mutex<ListenRestoreAction>(.promiseRestoration)
    /// Runs inside `didReceiveUnhandledListen`, before it answers.
    let onUnhandledListen = Mutex<(@Sendable (CharacteristicIdentifier, Data?) -> Void)?>(nil)

    func count(_ prefix: String) -> Int { events.all.filter { $0.hasPrefix(prefix) }.count }

    func bluetoothAvailable(_ available: Bool) { events.append("available \(available)") }
    func connected(to peripheral: PeripheralIdentifier) { events.append("connected \(peripheral.address)") }
    func disconnected(from peripheral: PeripheralIdentifier) { events.append("disconnected \(peripheral.address)") }

    func didDisconnect(from peripheral: PeripheralIdentifier, with error: (any Error)?, willReconnect autoReconnect: Bool) -> AutoReconnectMode {
        events.append("handler \(error == nil ? "expected" : "unexpected") willReconnect=\(autoReconnect)")
        return reconnectAnswer.withLock { $0 }
    }

    func didModifyServices(from peripheral: PeripheralIdentifier, invalidatedServices: [ServiceIdentifier]) {
        events.append("services modified \(invalidatedServices.map(\.description))")
    }

    func didReceiveUnhandledListen(from peripheral: PeripheralIdentifier, on characteristic: CharacteristicIdentifier, with value: Data?) -> ListenRestoreAction {
        events.append("unhandled \(characteristic.uuidString) \(value.map { Array($0) } ?? [])")
        onUnhandledListen.withLock { $0 }?(characteristic, value)
        return restoreAnswer.withLock { $0 }
    }

    func didRestoreConnection(to peripheral: PeripheralIdentifier) -> BackgroundRestoreCompletion {
        events.append("restored \(peripheral.address)")
        return .callback { [events] in events.append("restore callback") }
    }

    func didFailToRestoreConnection(to peripheral: PeripheralIdentifier, error: any Error) -> BackgroundRestoreCompletion {
        events.append("restore failed \(peripheral.address): \(error)")
        return .continue
    }

    func debug(_ text: String) { logLines.append(text) }
}
