import BluetoothCore
import BluetoothHost
import GATTProfiles

/// Why a ``PeripheralManager`` operation failed.
public enum PeripheralError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The host or the controller failed (not powered on, transport closed, a command refused…).
    case host(HostError)
    /// The GATT server refused (invalid definition, unknown handle, value too long…).
    case server(GATTServerError)
    /// A typed value could not be encoded.
    case serde(SerdeError)
    /// No published characteristic has this UUID (or value handle).
    case unknownCharacteristic(String)
    /// The characteristic has no profile to turn text into a value.
    case noProfile(BluetoothUUID)
    /// The text fields do not make a value of the characteristic.
    case invalidStringValue(BluetoothUUID, [String: String])
    /// The advertising data does not fit; the text says what to change.
    case advertising(String)

    public var description: String {
        switch self {
        case let .host(error): return "\(error)"
        case let .server(error): return "\(error)"
        case let .serde(error): return "\(error)"
        case let .unknownCharacteristic(what): return "no published characteristic \(what)"
        case let .noProfile(uuid): return "characteristic \(uuid) has no profile to convert text with"
        case let .invalidStringValue(uuid, fields): return "\(fields) is not a value of characteristic \(uuid)"
        case let .advertising(what): return "cannot advertise: \(what)"
        }
    }

    static func wrap(_ error: any Error) -> PeripheralError {
        switch error {
        case let error as PeripheralError: return error
        case let error as HostError: return .host(error)
        case let error as GATTServerError: return .server(error)
        case let error as SerdeError: return .serde(error)
        case is CancellationError: return .host(.cancelled)
        default: return .host(.protocolViolation("\(error)"))
        }
    }
}
