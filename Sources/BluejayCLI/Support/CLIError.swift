import BluetoothCore
import BluetoothHost
import BluetoothTransport

/// A failure the CLI reports on stderr, with the exit code that tells scripts what happened.
enum CLIError: Error, CustomStringConvertible {
    case usage(String)
    case transport(TransportError)
    case deviceNotFound(String)
    case notFound(String)
    case timeout(String)
    case host(HostError)
    case capture(CaptureError)

    /// 64 usage, 69 device not found / unavailable, 65 ATT error (data), 75 timeout, 74 transport I/O,
    /// 73 capture file not created, 1 other.
    var exitCode: Int32 {
        switch self {
        case .usage: return 64
        case .deviceNotFound, .notFound: return 69
        case .timeout: return 75
        case .transport: return 74
        case .capture: return 73
        case let .host(error):
            switch error {
            case .att: return 65
            case .transportClosed: return 74
            case .connectionTimeout: return 69
            case .attTransactionTimeout: return 75
            default: return 1
            }
        }
    }

    var description: String {
        switch self {
        case let .usage(message): return message
        case let .transport(error): return "\(error)"
        case let .capture(.fileExists(path)):
            return "the capture file \(path) already exists: pass --capture-append to add to it or --capture-overwrite to replace it"
        case let .capture(error): return "\(error)"
        case let .deviceNotFound(message): return "device not found: \(message)"
        case let .notFound(message): return "not found: \(message)"
        case let .timeout(message): return "timeout: \(message)"
        case let .host(error):
            switch error {
            case let .att(attError): return "ATT error: \(attError)"
            case let .connectionTimeout(peer): return "device not found: \(peer) did not accept a connection (is it advertising and in range?)"
            default: return "\(error)"
            }
        }
    }

    /// Maps whatever a command threw to a CLI error.
    static func from(_ error: any Error) -> CLIError {
        switch error {
        case let error as CLIError: return error
        case let HostError.notFound(what): return .notFound(what)
        case let error as HostError: return .host(error)
        case let error as TransportError: return .transport(error)
        case let error as CaptureError: return .capture(error)
        default: return .usage("\(error)")
        }
    }
}
