import BluetoothCore

/// The parameters of one LE Meta subevent (Core 6.0, Vol 4, Part E, 7.7.65).
public protocol HCILEMetaEventParameters: Sendable, Equatable {
    static var subeventCode: UInt8 { get }
    static var name: String { get }
    init(parameters reader: inout ByteReader) throws(PacketDecodingError)
    func encodeParameters(into writer: inout ByteWriter)
}

/// Subevent parameters that declare their fields once (`PacketFields`) take their decoder
/// and encoder from that declaration.
extension HCILEMetaEventParameters where Self: PacketFields {
    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try self.init(fieldsFrom: &reader) }
    public func encodeParameters(into writer: inout ByteWriter) { writeFields(to: &writer) }
}

/// An LE Meta event: event code 0x3E, then a subevent code.
///
/// Subevents this stack does not know are kept as ``unknown(subevent:parameters:)``.
public enum HCILEMetaEvent: Sendable, Equatable, CustomStringConvertible {
    case connectionComplete(LEConnectionCompleteEvent)
    case advertisingReport(LEAdvertisingReportEvent)
    case connectionUpdateComplete(LEConnectionUpdateCompleteEvent)
    case readRemoteFeaturesComplete(LEReadRemoteFeaturesCompleteEvent)
    case longTermKeyRequest(LELongTermKeyRequestEvent)
    case remoteConnectionParameterRequest(LERemoteConnectionParameterRequestEvent)
    case dataLengthChange(LEDataLengthChangeEvent)
    case enhancedConnectionComplete(LEEnhancedConnectionCompleteEvent)
    case enhancedConnectionCompleteV2(LEEnhancedConnectionCompleteV2Event)
    case phyUpdateComplete(LEPHYUpdateCompleteEvent)
    case extendedAdvertisingReport(LEExtendedAdvertisingReportEvent)
    /// LE Scan Timeout (Core 6.0, Vol 4, Part E, 7.7.65.17): scanning started with a duration
    /// ended. It has no parameters.
    case scanTimeout
    case advertisingSetTerminated(LEAdvertisingSetTerminatedEvent)
    case channelSelectionAlgorithm(LEChannelSelectionAlgorithmEvent)
    case unknown(subevent: UInt8, parameters: [UInt8])

    public static let eventCode: UInt8 = 0x3E
    /// The subevent code of ``scanTimeout``.
    public static let scanTimeoutSubeventCode: UInt8 = 0x11

    /// Encodes the subevent code and its parameters (the event parameters of the LE Meta event).
    public func encodeParameters(into writer: inout ByteWriter) {
        func put<E: HCILEMetaEventParameters>(_ event: E) {
            writer.write(E.subeventCode)
            event.encodeParameters(into: &writer)
        }
        switch self {
        case let .connectionComplete(event): put(event)
        case let .advertisingReport(event): put(event)
        case let .connectionUpdateComplete(event): put(event)
        case let .readRemoteFeaturesComplete(event): put(event)
        case let .longTermKeyRequest(event): put(event)
        case let .remoteConnectionParameterRequest(event): put(event)
        case let .dataLengthChange(event): put(event)
        case let .enhancedConnectionComplete(event): put(event)
        case let .enhancedConnectionCompleteV2(event): put(event)
        case let .phyUpdateComplete(event): put(event)
        case let .extendedAdvertisingReport(event): put(event)
        case .scanTimeout: writer.write(Self.scanTimeoutSubeventCode)
        case let .advertisingSetTerminated(event): put(event)
        case let .channelSelectionAlgorithm(event): put(event)
        case let .unknown(subevent, parameters):
            writer.write(subevent)
            writer.write(contentsOf: parameters)
        }
    }

    /// Decodes the parameters of an LE Meta event (subevent code first).
    public static func decode(parameters: [UInt8]) throws(PacketDecodingError) -> HCILEMetaEvent {
        try decode(parameters: parameters[...])
    }

    public static func decode(parameters: ArraySlice<UInt8>) throws(PacketDecodingError) -> HCILEMetaEvent {
        var reader = ByteReader(parameters, context: "LE Meta event")
        let subevent = try reader.readUInt8()
        let rest = reader.remaining
        func decode<E: HCILEMetaEventParameters>(_ type: E.Type) throws(PacketDecodingError) -> E {
            var reader = ByteReader(rest, context: E.name)
            let event = try E(parameters: &reader)
            try reader.expectEnd()
            return event
        }
        switch subevent {
        case LEConnectionCompleteEvent.subeventCode: return .connectionComplete(try decode(LEConnectionCompleteEvent.self))
        case LEAdvertisingReportEvent.subeventCode: return .advertisingReport(try decode(LEAdvertisingReportEvent.self))
        case LEConnectionUpdateCompleteEvent.subeventCode: return .connectionUpdateComplete(try decode(LEConnectionUpdateCompleteEvent.self))
        case LEReadRemoteFeaturesCompleteEvent.subeventCode: return .readRemoteFeaturesComplete(try decode(LEReadRemoteFeaturesCompleteEvent.self))
        case LELongTermKeyRequestEvent.subeventCode: return .longTermKeyRequest(try decode(LELongTermKeyRequestEvent.self))
        case LERemoteConnectionParameterRequestEvent.subeventCode:
            return .remoteConnectionParameterRequest(try decode(LERemoteConnectionParameterRequestEvent.self))
        case LEDataLengthChangeEvent.subeventCode: return .dataLengthChange(try decode(LEDataLengthChangeEvent.self))
        case LEEnhancedConnectionCompleteEvent.subeventCode: return .enhancedConnectionComplete(try decode(LEEnhancedConnectionCompleteEvent.self))
        case LEEnhancedConnectionCompleteV2Event.subeventCode:
            return .enhancedConnectionCompleteV2(try decode(LEEnhancedConnectionCompleteV2Event.self))
        case LEPHYUpdateCompleteEvent.subeventCode: return .phyUpdateComplete(try decode(LEPHYUpdateCompleteEvent.self))
        case LEExtendedAdvertisingReportEvent.subeventCode: return .extendedAdvertisingReport(try decode(LEExtendedAdvertisingReportEvent.self))
        case scanTimeoutSubeventCode:
            guard rest.isEmpty else { throw .trailingBytes(context: "LE Scan Timeout", count: rest.count) }
            return .scanTimeout
        case LEAdvertisingSetTerminatedEvent.subeventCode: return .advertisingSetTerminated(try decode(LEAdvertisingSetTerminatedEvent.self))
        case LEChannelSelectionAlgorithmEvent.subeventCode: return .channelSelectionAlgorithm(try decode(LEChannelSelectionAlgorithmEvent.self))
        default: return .unknown(subevent: subevent, parameters: Array(rest))
        }
    }

    public var description: String {
        switch self {
        case let .connectionComplete(event): return "\(event)"
        case let .advertisingReport(event): return "\(event)"
        case let .connectionUpdateComplete(event): return "\(event)"
        case let .readRemoteFeaturesComplete(event): return "\(event)"
        case let .longTermKeyRequest(event): return "\(event)"
        case let .remoteConnectionParameterRequest(event): return "\(event)"
        case let .dataLengthChange(event): return "\(event)"
        case let .enhancedConnectionComplete(event): return "\(event)"
        case let .enhancedConnectionCompleteV2(event): return "\(event)"
        case let .phyUpdateComplete(event): return "\(event)"
        case let .extendedAdvertisingReport(event): return "\(event)"
        case .scanTimeout: return "LE Scan Timeout"
        case let .advertisingSetTerminated(event): return "\(event)"
        case let .channelSelectionAlgorithm(event): return "\(event)"
        case let .unknown(subevent, parameters):
            return "Unknown LE subevent \(Hex.format(subevent)) [\(Hex.encode(parameters, separator: " "))]"
        }
    }
}
