import BluetoothCore

/// How the controller acknowledges a command (Core 6.0, Vol 4, Part E, 4.4).
public enum HCICommandAcknowledgement: Sendable {
    /// A Command Complete event carries the result.
    case commandComplete
    /// A Command Status event says the command started; a later event carries the result.
    case commandStatus
}

/// An HCI command with its parameters, as a value. Each command encodes and decodes its own
/// parameters: the host encodes, the virtual controller decodes, and tests check both.
public protocol HCICommand: Sendable, Equatable {
    /// What a successful Command Complete returns after its Status octet.
    associatedtype ReturnParameters: HCIReturnParameters = HCINoReturnParameters

    static var opcode: HCIOpcode { get }
    /// A readable name, e.g. "LE Set Scan Enable".
    static var name: String { get }
    static var acknowledgement: HCICommandAcknowledgement { get }

    func encodeParameters(into writer: inout ByteWriter)
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
}

extension HCICommand {
    public static var acknowledgement: HCICommandAcknowledgement { .commandComplete }

    /// The command packet (opcode, length, parameters), without the H4 indicator.
    public func encode() -> [UInt8] {
        var parameters = ByteWriter()
        encodeParameters(into: &parameters)
        return HCICommandPacket(opcode: Self.opcode, parameters: parameters.bytes).encode()
    }

    /// Decodes the parameters of a command packet whose opcode is this command's, requiring
    /// that every byte is used.
    public static func decode(parameters: [UInt8]) throws(PacketDecodingError) -> Self {
        var reader = ByteReader(parameters, context: name)
        let command = try Self(parameters: &reader)
        try reader.expectEnd()
        return command
    }
}

/// A command that declares its parameters once (`PacketFields`) takes its decoder and
/// encoder from that declaration.
extension HCICommand where Self: PacketFields {
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeParameters(into writer: inout ByteWriter) { writeFields(to: &writer) }
}

/// The parameters a Command Complete event returns after its Status octet.
public protocol HCIReturnParameters: Sendable, Equatable {
    /// Whether these return parameters start with the Connection_Handle the command acted on
    /// (its first parameter): the controller then matches an answer to its command by it.
    static var leadsWithConnectionHandle: Bool { get }

    init(returnParameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeReturnParameters(into writer: inout ByteWriter)
}

extension HCIReturnParameters {
    public static var leadsWithConnectionHandle: Bool { false }

    /// Decodes return parameters (without the Status octet), allowing trailing bytes: later
    /// versions of the specification may append fields.
    public static func decode(returnParameters bytes: [UInt8], context: String) throws(PacketDecodingError) -> Self {
        var reader = ByteReader(bytes, context: context)
        return try Self(returnParameters: &reader)
    }

    /// The return parameters of a successful command: the Status octet, then the fields.
    public func encodeWithSuccessStatus() -> [UInt8] {
        var writer = ByteWriter()
        writer.write(HCIStatus.success.rawValue)
        encodeReturnParameters(into: &writer)
        return writer.bytes
    }
}

/// Return parameters that declare their fields once (`PacketFields`) take their decoder and
/// encoder from that declaration.
extension HCIReturnParameters where Self: PacketFields {
    public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeReturnParameters(into writer: inout ByteWriter) { writeFields(to: &writer) }
}

/// Return parameters of commands that return only a Status.
public struct HCINoReturnParameters: HCIReturnParameters {
    public init() {}
    public init(returnParameters reader: inout ByteReader) throws(PacketDecodingError) {}
    public func encodeReturnParameters(into writer: inout ByteWriter) {}
}

/// A command packet whose parameters are not yet decoded (Core 6.0, Vol 4, Part E, 5.4.1).
public struct HCICommandPacket: Sendable, Equatable, CustomStringConvertible {
    public var opcode: HCIOpcode
    public var parameters: [UInt8]

    public init(opcode: HCIOpcode, parameters: [UInt8]) {
        self.opcode = opcode
        self.parameters = parameters
    }

    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 3 + parameters.count)
        writer.write(opcode.rawValue)
        writer.write(UInt8(truncatingIfNeeded: parameters.count))
        writer.write(contentsOf: parameters)
        return writer.bytes
    }

    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> HCICommandPacket {
        try decode(bytes[...])
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> HCICommandPacket {
        var reader = ByteReader(bytes, context: "HCI command packet")
        let opcode = HCIOpcode(rawValue: try reader.readUInt16())
        let length = Int(try reader.readUInt8())
        guard reader.remainingCount == length else {
            throw .lengthMismatch(context: "HCI command \(opcode)", declared: length, actual: reader.remainingCount)
        }
        return HCICommandPacket(opcode: opcode, parameters: reader.readRemaining())
    }

    public var description: String { "\(opcode) [\(Hex.encode(parameters, separator: " "))]" }
}
