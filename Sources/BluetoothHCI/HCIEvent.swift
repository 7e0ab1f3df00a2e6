import BluetoothCore

/// The parameters of one HCI event, as a value with its encoder and decoder side by side.
public protocol HCIEventParameters: Sendable, Equatable {
    static var eventCode: UInt8 { get }
    static var name: String { get }
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeParameters(into writer: inout ByteWriter)
}

/// Event parameters that declare their fields once (`PacketFields`) take their decoder and
/// encoder from that declaration.
extension HCIEventParameters where Self: PacketFields {
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeParameters(into writer: inout ByteWriter) { writeFields(to: &writer) }
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
    case hardwareError(HardwareErrorEvent)
    case encryptionChange(EncryptionChangeEvent)
    case encryptionChangeV2(EncryptionChangeV2Event)
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshCompleteEvent)
    case readRemoteVersionInformationComplete(ReadRemoteVersionInformationCompleteEvent)
    case dataBufferOverflow(DataBufferOverflowEvent)
    case le(HCILEMetaEvent)
    case unknown(code: UInt8, parameters: [UInt8])

    /// The event packet (code, length, parameters), without the H4 indicator.
    public func encode() -> [UInt8] {
        var writer = ByteWriter()
        func put<E: HCIEventParameters>(_ event: E) -> UInt8 {
            event.encodeParameters(into: &writer)
            return E.eventCode
        }
        let code: UInt8
        switch self {
        case let .commandComplete(event): code = put(event)
        case let .commandStatus(event): code = put(event)
        case let .numberOfCompletedPackets(event): code = put(event)
        case let .disconnectionComplete(event): code = put(event)
        case let .hardwareError(event): code = put(event)
        case let .encryptionChange(event): code = put(event)
        case let .encryptionChangeV2(event): code = put(event)
        case let .encryptionKeyRefreshComplete(event): code = put(event)
        case let .readRemoteVersionInformationComplete(event): code = put(event)
        case let .dataBufferOverflow(event): code = put(event)
        case let .le(event): code = HCILEMetaEvent.eventCode; event.encodeParameters(into: &writer)
        case let .unknown(unknownCode, parameters): code = unknownCode; writer.write(contentsOf: parameters)
        }
        return [code, UInt8(truncatingIfNeeded: writer.bytes.count)] + writer.bytes
    }

    /// Decodes an event packet. Throws for a malformed packet of a known event (truncated,
    /// trailing bytes, a length field that disagrees, a value the specification does not
    /// allow); returns ``unknown(code:parameters:)`` for an event code this stack does not know.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> HCIEvent {
        try decode(bytes[...])
    }

    public static func decode(_ bytes: ArraySlice<UInt8>) throws(PacketDecodingError) -> HCIEvent {
        var header = ByteReader(bytes, context: "HCI event")
        let code = try header.readUInt8()
        let length = Int(try header.readUInt8())
        guard header.remainingCount == length else {
            throw .lengthMismatch(context: "HCI event \(Hex.format(code))", declared: length, actual: header.remainingCount)
        }
        let parameters = header.remaining
        func decode<E: HCIEventParameters>(_ type: E.Type) throws(PacketDecodingError) -> E {
            var reader = ByteReader(parameters, context: E.name)
            let event = try E(parameters: &reader)
            try reader.expectEnd()
            return event
        }
        switch code {
        case CommandCompleteEvent.eventCode: return .commandComplete(try decode(CommandCompleteEvent.self))
        case CommandStatusEvent.eventCode: return .commandStatus(try decode(CommandStatusEvent.self))
        case NumberOfCompletedPacketsEvent.eventCode: return .numberOfCompletedPackets(try decode(NumberOfCompletedPacketsEvent.self))
        case DisconnectionCompleteEvent.eventCode: return .disconnectionComplete(try decode(DisconnectionCompleteEvent.self))
        case HardwareErrorEvent.eventCode: return .hardwareError(try decode(HardwareErrorEvent.self))
        case EncryptionChangeEvent.eventCode: return .encryptionChange(try decode(EncryptionChangeEvent.self))
        case EncryptionChangeV2Event.eventCode: return .encryptionChangeV2(try decode(EncryptionChangeV2Event.self))
        case EncryptionKeyRefreshCompleteEvent.eventCode: return .encryptionKeyRefreshComplete(try decode(EncryptionKeyRefreshCompleteEvent.self))
        case ReadRemoteVersionInformationCompleteEvent.eventCode:
            return .readRemoteVersionInformationComplete(try decode(ReadRemoteVersionInformationCompleteEvent.self))
        case DataBufferOverflowEvent.eventCode: return .dataBufferOverflow(try decode(DataBufferOverflowEvent.self))
        case HCILEMetaEvent.eventCode: return .le(try HCILEMetaEvent.decode(parameters: parameters))
        default: return .unknown(code: code, parameters: Array(parameters))
        }
    }

    public var description: String {
        switch self {
        case let .commandComplete(event): return "\(event)"
        case let .commandStatus(event): return "\(event)"
        case let .numberOfCompletedPackets(event): return "\(event)"
        case let .disconnectionComplete(event): return "\(event)"
        case let .hardwareError(event): return "\(event)"
        case let .encryptionChange(event): return "\(event)"
        case let .encryptionChangeV2(event): return "\(event)"
        case let .encryptionKeyRefreshComplete(event): return "\(event)"
        case let .readRemoteVersionInformationComplete(event): return "\(event)"
        case let .dataBufferOverflow(event): return "\(event)"
        case let .le(event): return "\(event)"
        case let .unknown(code, parameters): return "Unknown event \(Hex.format(code)) [\(Hex.encode(parameters, separator: " "))]"
        }
    }
}
