import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral

/// Something that happened to a ``SimulatedDevice``, as ``SimulatedDevice/events()`` reports it.
public enum SimulatedDeviceEvent: Sendable, Hashable, CustomStringConvertible {
    /// A central connected.
    case connected(Central)
    /// A central's link ended, with the reason the controller reported.
    case disconnected(Central, reason: HCIStatus)
    /// A central turned notifications or indications of a characteristic on or off.
    case subscriptionChanged(Central, characteristic: BluetoothUUID, isNotifying: Bool, isIndicating: Bool)
    /// A central read a characteristic; `response` is the answer, about to be sent.
    case read(Central, characteristic: BluetoothUUID, response: GATTReadResponse)
    /// A central wrote a characteristic; `response` is the answer, about to be sent (a Write
    /// Command gets none). On `.success` the value is stored.
    case written(Central, characteristic: BluetoothUUID, value: [UInt8], kind: GATTWriteRequest.Kind, response: GATTWriteResponse)
    /// An injected failure was applied to a request.
    case failureInjected(SimulatedFailure, characteristic: BluetoothUUID)

    public var description: String {
        switch self {
        case let .connected(central): return "connected: \(central)"
        case let .disconnected(central, reason): return "disconnected: \(central) (\(reason))"
        case let .subscriptionChanged(central, uuid, notifying, indicating):
            let what = notifying ? "notifications" : indicating ? "indications" : "nothing"
            return "\(central) subscribed to \(uuid): \(what)"
        case let .read(central, uuid, response): return "\(central) read \(uuid): \(response)"
        case let .written(central, uuid, value, kind, response): return "\(central) wrote \(value.count) bytes to \(uuid) (\(kind)): \(response)"
        case let .failureInjected(failure, uuid): return "injected on \(uuid): \(failure)"
        }
    }
}
