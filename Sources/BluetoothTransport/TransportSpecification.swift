import Foundation

/// Where the controller is, in the one string syntax shared by the API and the CLI:
///
/// | form | meaning |
/// | --- | --- |
/// | `tcp:HOST:PORT` | H4 over TCP (Bumble's virtual controllers, a network bridge) |
/// | `unix:PATH` | H4 over a Unix domain socket |
/// | `serial:DEVICE[@BAUD]` | H4 over a UART, e.g. an nRF/Zephyr `hci_uart` dongle (default 1000000 baud, RTS/CTS) |
/// | `hciN` | the Linux HCI user channel of adapter N (adapter down in BlueZ, CAP_NET_ADMIN) |
/// | `virtual` or `virtual:NAME` | an in-process virtual controller (opened by a higher layer) |
/// | `bluez` or `bluez:hciN` | not a controller: BlueZ's bluetoothd keeps the adapter (the default one, or `hciN`) and Bluejay talks to it over D-Bus (the BlueZ backend, opened by a higher layer) |
public enum TransportSpecification: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: UInt16)
    case unix(path: String)
    case serial(path: String, baudRate: Int)
    case hciUserChannel(index: UInt16)
    case virtual(name: String?)
    /// The BlueZ backend: bluetoothd's adapter `hciN`, or its default adapter (`nil`). Not an
    /// HCI transport: the layers above run on BlueZ's D-Bus API instead of our host.
    case bluez(adapter: String?)

    public static let defaultSerialBaudRate = 1_000_000

    public init(parsing text: String) throws(TransportError) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("hci"), let index = UInt16(trimmed.dropFirst(3)) {
            self = .hciUserChannel(index: index)
            return
        }
        if trimmed == "virtual" {
            self = .virtual(name: nil)
            return
        }
        if trimmed == "bluez" {
            self = .bluez(adapter: nil)
            return
        }
        guard let colon = trimmed.firstIndex(of: ":") else {
            throw .invalidSpecification(text, reason: "missing scheme")
        }
        let scheme = trimmed[..<colon]
        let rest = String(trimmed[trimmed.index(after: colon)...])
        switch scheme {
        case "tcp":
            guard let portColon = rest.lastIndex(of: ":"),
                  let port = UInt16(rest[rest.index(after: portColon)...]), port != 0 else {
                throw .invalidSpecification(text, reason: "expected tcp:HOST:PORT with a port from 1 to 65535")
            }
            var host = String(rest[..<portColon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw .invalidSpecification(text, reason: "missing host") }
            self = .tcp(host: host, port: port)
        case "unix":
            guard !rest.isEmpty else { throw .invalidSpecification(text, reason: "missing socket path") }
            self = .unix(path: rest)
        case "serial":
            let parts = rest.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
            guard let path = parts.first, !path.isEmpty else {
                throw .invalidSpecification(text, reason: "missing serial device path")
            }
            var baud = Self.defaultSerialBaudRate
            if parts.count == 2 {
                guard let parsed = Int(parts[1]), parsed > 0 else {
                    throw .invalidSpecification(text, reason: "baud rate must be a positive number")
                }
                baud = parsed
            }
            self = .serial(path: String(path), baudRate: baud)
        case "virtual":
            self = .virtual(name: rest.isEmpty ? nil : rest)
        case "bluez":
            // An adapter is named as BlueZ names it: hci0, hci1, ...
            guard rest.hasPrefix("hci"), UInt16(rest.dropFirst(3)) != nil else {
                throw .invalidSpecification(text, reason: "expected bluez or bluez:hciN (the adapter as BlueZ names it, e.g. bluez:hci0)")
            }
            self = .bluez(adapter: rest)
        default:
            throw .invalidSpecification(text, reason: "unknown scheme \"\(scheme)\"")
        }
    }

    public var description: String {
        switch self {
        // In brackets when the parser would otherwise take the host apart: an IPv6 address, or a
        // host that is itself in brackets (the parser removes one pair).
        case let .tcp(host, port):
            let bracketed = host.contains(":") || (host.hasPrefix("[") && host.hasSuffix("]"))
            return bracketed ? "tcp:[\(host)]:\(port)" : "tcp:\(host):\(port)"
        case let .unix(path): return "unix:\(path)"
        case let .serial(path, baud): return baud == Self.defaultSerialBaudRate ? "serial:\(path)" : "serial:\(path)@\(baud)"
        case let .hciUserChannel(index): return "hci\(index)"
        case let .virtual(name): return name.map { "virtual:\($0)" } ?? "virtual"
        case let .bluez(adapter): return adapter.map { "bluez:\($0)" } ?? "bluez"
        }
    }

    /// Whether this names the BlueZ backend rather than an HCI transport.
    public var isBlueZ: Bool {
        if case .bluez = self { return true }
        return false
    }
}
