import BluetoothCore

/// The parameters of one HCI event, as a value with its encoder and decoder side by side.
public protocol HCIEventParameters: Sendable, Equatable {
    static var eventCode: UInt8 { get }
    static var name: String { get }
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeParameters(into writer: inout ByteWriter)
}

/// An HCI event from the controller (Core 6.0, Vol 4, Part E, 7.7).
///
/// Events this stack does not know are kept as ``unknown(code:parameters:)``: they are logged
/// and never fatal.
public enum HCIEvent: Sendable, Equatable, CustomStringConvertible {
    case commandComplete(CommandCompleteEvent)
    case commandStatus(CommandStatusEvent)
    case numberOfCompletedPackets(NumberOfCompletedPacketsEvent)
    case disconnectionComplete(DisconnectionCompleteEvent)
    case le(HCILEMetaEvent)
    case unknown(code: UInt8, parameters: [UInt8])

    /// The event packet (code, length, parameters), without the H4 indicator.
    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        let code: UInt8
        switch self {
        case let .commandComplete(event): code = type(of: event).eventCode; event.encodeParameters(into: &writer)
        case let .commandStatus(event): code = type(of: event).eventCode; event.encodeParameters(into: &writer)
        case let .numberOfCompletedPackets(event): code = type(of: event).eventCode; event.encodeParameters(into: &writer)
        case let .disconnectionComplete(event): code = type(of: event).eventCode; event.encodeParameters(into: &writer)
        case let .le(event): code = HCILEMetaEvent.eventCode; event.encodeParameters(into: &writer)
        case let .unknown(unknownCode, parameters): code = unknownCode; writer.write(contentsOf: parameters)
        }
        return [code, UInt8(truncatingIfNeeded: writer.bytes.count)] + writer.bytes
    }

    /// Decodes an event packet. Throws for a malformed packet of a known event; returns
    /// ``unknown(code:parameters:)`` for an event code this stack does not know.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> HCIEvent {
        var header = ByteReader(bytes, context: "HCI event")
        let code = try header.readUInt8()
        let length = Int(try header.readUInt8())
        guard header.remainingCount == length else {
            throw .lengthMismatch(context: "HCI event 0x\(String(code, radix: 16))", declared: length, actual: header.remainingCount)
        }
        let parameters = header.readRemaining()
        func decode<E: HCIEventParameters>(_ type: E.Type) throws(PacketDecodingError) -> E {
            var reader = ByteReader(parameters, context: E.name)
            return try E(parameters: &reader)
        }
        switch code {
        case CommandCompleteEvent.eventCode: return .commandComplete(try decode(CommandCompleteEvent.self))
        case CommandStatusEvent.eventCode: return .commandStatus(try decode(CommandStatusEvent.self))
        case NumberOfCompletedPacketsEvent.eventCode: return .numberOfCompletedPackets(try decode(NumberOfCompletedPacketsEvent.self))
        case DisconnectionCompleteEvent.eventCode: return .disconnectionComplete(try decode(DisconnectionCompleteEvent.self))
        case HCILEMetaEvent.eventCode: return .le(try HCILEMetaEvent.decode(parameters: parameters))
        default: return .unknown(code: code, parameters: parameters)
        }
    }

    public var description: String {
        switch self {
        case let .commandComplete(event): return "\(event)"
        case let .commandStatus(event): return "\(event)"
        case let .numberOfCompletedPackets(event): return "\(event)"
        case let .disconnectionComplete(event): return "\(event)"
        case let .le(event): return "\(event)"
        case let .unknown(code, parameters): return "Unknown event 0x\(String(code, radix: 16)) [\(Hex.encode(parameters, separator: " "))]"
        }
    }
}
