import BluetoothCore

/// The parameters of one LE Meta subevent (Core 6.0, Vol 4, Part E, 7.7.65).
public protocol HCILEMetaEventParameters: Sendable, Equatable {
    static var subeventCode: UInt8 { get }
    static var name: String { get }
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeParameters(into writer: inout ByteWriter)
}

/// An LE Meta event: event code 0x3E, then a subevent code.
public enum HCILEMetaEvent: Sendable, Equatable, CustomStringConvertible {
    case unknown(subevent: UInt8, parameters: [UInt8])

    public static let eventCode: UInt8 = 0x3E

    /// Encodes the subevent code and its parameters (the event parameters of the LE Meta event).
    public func encodeParameters(into writer: inout ByteWriter) {
        switch self {
        case let .unknown(subevent, parameters):
            writer.write(subevent)
            writer.write(contentsOf: parameters)
        }
    }

    public static func decode(parameters: [UInt8]) throws(PacketDecodingError) -> HCILEMetaEvent {
        var reader = ByteReader(parameters, context: "LE Meta event")
        let subevent = try reader.readUInt8()
        let rest = reader.readRemaining()
        switch subevent {
        default: return .unknown(subevent: subevent, parameters: rest)
        }
    }

    public var description: String {
        switch self {
        case let .unknown(subevent, parameters):
            return "Unknown LE subevent 0x\(String(subevent, radix: 16)) [\(Hex.encode(parameters, separator: " "))]"
        }
    }
}
