/// A checked D-Bus object path: `/`, or `/`-separated non-empty elements of `[A-Za-z0-9_]`
/// with no trailing `/` (D-Bus Specification, "Valid Object Paths").
///
/// ```swift
/// let adapter = try DBusObjectPath("/org/bluez/hci0")
/// let device = try adapter.appending("dev_C0_FF_EE_00_11_22")
/// ```
public struct DBusObjectPath: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The path as text.
    public let description: String

    /// `/`.
    public static let root = DBusObjectPath(uncheckedKnownValid: "/")

    /// Checks `text`; throws ``DBusWireError/invalidObjectPath(_:)`` if it is not a valid path.
    public init(_ text: String) throws(DBusWireError) {
        guard Self.isValid(text.utf8) else { throw .invalidObjectPath(text) }
        description = text
    }

    /// For paths known to be valid (constants of this module).
    init(uncheckedKnownValid text: String) {
        description = text
    }

    /// The path with one more element, which must be non-empty `[A-Za-z0-9_]`.
    public func appending(_ element: String) throws(DBusWireError) -> DBusObjectPath {
        let joined = self == .root ? "/" + element : description + "/" + element
        guard !element.isEmpty, element.utf8.allSatisfy({ DBusNames.isElementCharacter($0, digitsFirst: true, hyphen: false) }) else {
            throw .invalidObjectPath(joined)
        }
        return DBusObjectPath(uncheckedKnownValid: joined)
    }

    /// The path's elements (none for `/`).
    public var elements: [Substring] {
        description.split(separator: "/")
    }

    /// The path one element up (`nil` for `/`).
    public var parent: DBusObjectPath? {
        guard self != .root, let slash = description.lastIndex(of: "/") else { return nil }
        return slash == description.startIndex ? .root : DBusObjectPath(uncheckedKnownValid: String(description[..<slash]))
    }

    /// Whether `self` is `other` or below it: `/a/b` is within `/a` and `/`, not within `/ab`.
    public func isWithin(_ other: DBusObjectPath) -> Bool {
        if other == .root || self == other { return true }
        return description.hasPrefix(other.description + "/")
    }

    public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool {
        lhs.description < rhs.description
    }

    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = false
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else {
                guard DBusNames.isElementCharacter(byte, digitsFirst: true, hyphen: false) else { return false }
                previousWasSlash = false
            }
        }
        return !previousWasSlash
    }
}

/// The rules for bus, interface, member and error names (D-Bus Specification, "Valid Names").
enum DBusNames {
    static let maximumLength = 255
    /// The bus's own name (`org.freedesktop.DBus`).
    static let bus = "org.freedesktop.DBus"

    static func isElementCharacter(_ byte: UInt8, digitsFirst: Bool, hyphen: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "_"): return true
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digitsFirst
        case UInt8(ascii: "-"): return hyphen
        default: return false
        }
    }

    /// Two or more `.`-separated elements; an element may not start with a digit unless
    /// `digitsFirst` (unique connection names).
    private static func isDotted(_ name: String, digitsFirst: Bool, hyphen: Bool) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        var elements = 1
        var elementStart = true
        for byte in bytes {
            if byte == UInt8(ascii: ".") {
                if elementStart { return false }
                elements += 1
                elementStart = true
                continue
            }
            let digit = byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
            if elementStart && digit && !digitsFirst { return false }
            guard isElementCharacter(byte, digitsFirst: true, hyphen: hyphen) else { return false }
            elementStart = false
        }
        return elements >= 2 && !elementStart
    }

    /// `org.bluez.Adapter1`.
    static func isInterface(_ name: String) -> Bool { isDotted(name, digitsFirst: false, hyphen: false) }

    /// Error names follow the interface-name rules.
    static func isError(_ name: String) -> Bool { isInterface(name) }

    /// `StartDiscovery`: one element of `[A-Za-z_][A-Za-z0-9_]*`.
    static func isMember(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard let first = bytes.first, bytes.count <= maximumLength,
              isElementCharacter(first, digitsFirst: false, hyphen: false) else { return false }
        return bytes.allSatisfy { isElementCharacter($0, digitsFirst: true, hyphen: false) }
    }

    /// A unique name (`:1.42`) or a well-known name (`org.bluez`).
    static func isBus(_ name: String) -> Bool {
        if name.hasPrefix(":") { return isDotted(String(name.dropFirst()), digitsFirst: true, hyphen: true) && name.utf8.count <= maximumLength }
        return isDotted(name, digitsFirst: false, hyphen: true)
    }

    static func check(interface name: String) throws(DBusWireError) {
        guard isInterface(name) else { throw .invalidName(kind: "interface name", name: name) }
    }

    static func check(member name: String) throws(DBusWireError) {
        guard isMember(name) else { throw .invalidName(kind: "member name", name: name) }
    }

    static func check(error name: String) throws(DBusWireError) {
        guard isError(name) else { throw .invalidName(kind: "error name", name: name) }
    }

    static func check(bus name: String) throws(DBusWireError) {
        guard isBus(name) else { throw .invalidName(kind: "bus name", name: name) }
    }
}
