import BluetoothCore
import BluetoothHost
import BluetoothPeripheral

/// Why a simulated peripheral could not do what was asked.
public enum SimulatorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The peripheral's host, GATT server or advertising failed (controller not powered on,
    /// transport closed, a value too long, advertising data that does not fit…).
    case peripheral(PeripheralError)
    /// The declaration cannot be published or advertised as it is; the text says why.
    case invalidDeclaration(String)
    /// The peripheral has no characteristic with this UUID.
    case unknownCharacteristic(BluetoothUUID)
    /// The central did not subscribe to the characteristic, so nothing can be pushed to it.
    case notSubscribed(BluetoothUUID, Central)
    /// The central is not connected (any more).
    case notConnected(Central)
    /// The operation needs a virtual controller (moving, link faults), and this peripheral
    /// runs on another kind of controller.
    case notVirtual(String)
    /// Waited too long; the text says for what.
    case timedOut(String)
    /// The peripheral was stopped.
    case stopped

    public var description: String {
        switch self {
        case let .peripheral(error): return "\(error)"
        case let .invalidDeclaration(why): return "invalid simulated peripheral: \(why)"
        case let .unknownCharacteristic(uuid): return "the simulated peripheral has no characteristic \(uuid)"
        case let .notSubscribed(uuid, central): return "\(central) did not subscribe to \(uuid)"
        case let .notConnected(central): return "\(central) is not connected"
        case let .notVirtual(what): return "\(what) needs a virtual controller; this peripheral runs on another controller"
        case let .timedOut(what): return "timed out: \(what)"
        case .stopped: return "the simulated peripheral was stopped"
        }
    }
}
