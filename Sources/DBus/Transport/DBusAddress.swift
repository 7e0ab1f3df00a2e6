#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A D-Bus server address (D-Bus Specification, "Server Addresses"): a transport and its
/// `key=value` options, e.g. `unix:path=/run/dbus/system_bus_socket` or
/// `unix:abstract=/tmp/dbus-XYZ,guid=0f1e…`. A bus address may list several, separated by
/// `;`, tried in order.
///
/// This client connects to `unix:path=` and `unix:abstract=`. Listen-only forms
/// (`unix:tmpdir=`, `unix:dir=`, `unix:runtime=yes`) and other transports (`tcp:`,
/// `nonce-tcp:`, `unixexec:`, `autolaunch:`, `launchd:`, `systemd:`) are parsed, and skipped
/// with a reason when connecting.
public struct DBusAddress: Hashable, Sendable, CustomStringConvertible {
    /// The transport: `unix`, `tcp`, …
    public var transport: String
    /// The options, unescaped, in the order written.
    public var options: [(key: String, value: String)] {
        get { storedOptions.map { ($0.key, $0.value) } }
        set { storedOptions = newValue.map { Option(key: $0.key, value: $0.value) } }
    }

    private struct Option: Hashable, Sendable {
        var key: String
        var value: String
    }

    private var storedOptions: [Option]

    /// An address of `transport` with `options` (not escaped).
    public init(transport: String, options: [(key: String, value: String)]) {
        self.transport = transport
        storedOptions = options.map { Option(key: $0.key, value: $0.value) }
    }

    /// The value of `key`, if the address has it.
    public subscript(key: String) -> String? {
        storedOptions.first { $0.key == key }?.value
    }

    /// The server's GUID, when the address names one: the handshake must then report the same.
    public var guid: String? { self["guid"] }

    /// A Unix socket at `path`.
    public static func unixPath(_ path: String) -> DBusAddress {
        DBusAddress(transport: "unix", options: [("path", path)])
    }

    /// A socket in the Linux abstract namespace.
    public static func unixAbstract(_ name: String) -> DBusAddress {
        DBusAddress(transport: "unix", options: [("abstract", name)])
    }

    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS` if set, else `unix:path=/run/dbus/system_bus_socket`
    /// (D-Bus Specification, "Well-known Message Bus Instances").
    public static func systemBus() throws(DBusError) -> [DBusAddress] {
        if let value = environment("DBUS_SYSTEM_BUS_ADDRESS"), !value.isEmpty { return try parse(value) }
        return [.unixPath("/run/dbus/system_bus_socket")]
    }

    /// The session bus: `DBUS_SESSION_BUS_ADDRESS`. Throws ``DBusError/invalidAddress(_:reason:)``
    /// when it is not set.
    public static func sessionBus() throws(DBusError) -> [DBusAddress] {
        guard let value = environment("DBUS_SESSION_BUS_ADDRESS"), !value.isEmpty else {
            throw .invalidAddress("", reason: "DBUS_SESSION_BUS_ADDRESS is not set: there is no session bus in this environment "
                + "(start one with dbus-run-session, or use the system bus)")
        }
        return try parse(value)
    }

    private static func environment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }

    /// Parses a `;`-separated list of addresses, unescaping `%XX` in values.
    public static func parse(_ text: String) throws(DBusError) -> [DBusAddress] {
        var addresses: [DBusAddress] = []
        for entry in text.split(separator: ";", omittingEmptySubsequences: true) {
            guard let colon = entry.firstIndex(of: ":") else {
                throw .invalidAddress(text, reason: "\"\(entry)\" has no \"transport:\" prefix")
            }
            let transport = String(entry[..<colon])
            guard !transport.isEmpty else { throw .invalidAddress(text, reason: "\"\(entry)\" has an empty transport name") }
            var options: [(key: String, value: String)] = []
            for pair in entry[entry.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: true) {
                guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                    throw .invalidAddress(text, reason: "\"\(pair)\" is not key=value")
                }
                let key = String(pair[..<equals])
                guard options.allSatisfy({ $0.key != key }) else { throw .invalidAddress(text, reason: "the key \"\(key)\" appears twice") }
                guard let value = unescape(pair[pair.index(after: equals)...]) else {
                    throw .invalidAddress(text, reason: "\"\(pair)\" has a bad %-escape")
                }
                options.append((key, value))
            }
            addresses.append(DBusAddress(transport: transport, options: options))
        }
        guard !addresses.isEmpty else { throw .invalidAddress(text, reason: "it names no address") }
        return addresses
    }

    /// `%XX` escapes to bytes; the result must be UTF-8.
    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next(), let low = iterator.next(),
                  let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(value)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// The address as text, values escaped where the specification says they must be.
    public var description: String {
        transport + ":" + storedOptions.map { "\($0.key)=\(Self.escape($0.value))" }.joined(separator: ",")
    }

    private static func escape(_ value: String) -> String {
        var text = ""
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "/"), UInt8(ascii: "."), UInt8(ascii: "\\"), UInt8(ascii: "*"):
                text.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                text += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16)
            }
        }
        return text
    }

    /// Where a client connects, or why it cannot use this address.
    enum Endpoint: Equatable {
        case unixPath(String)
        case unixAbstract(String)
    }

    func endpoint() -> Result<Endpoint, DBusError> {
        guard transport == "unix" else {
            return .failure(.unsupported("the \"\(transport):\" transport (this client connects to unix:path= and unix:abstract= addresses)"))
        }
        let path = self["path"]
        let abstract = self["abstract"]
        switch (path, abstract) {
        case let (path?, nil): return .success(.unixPath(path))
        case let (nil, abstract?): return .success(.unixAbstract(abstract))
        case (.some, .some): return .failure(.invalidAddress(description, reason: "it has both path= and abstract="))
        case (nil, nil):
            if self["tmpdir"] != nil || self["dir"] != nil || self["runtime"] != nil {
                return .failure(.unsupported("\(description) is an address to listen on (tmpdir=, dir=, runtime=); a client needs path= or abstract="))
            }
            return .failure(.invalidAddress(description, reason: "a unix: address needs path= or abstract="))
        }
    }
}
