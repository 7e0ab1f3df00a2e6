import BluetoothCore

/// L2CAP_COMMAND_REJECT_RSP (Core 6.0, Vol 3, Part A, 4.1): the Reason and its Reason Data.
public enum L2CAPCommandRejectReason: LESignalingCommandData, CustomStringConvertible {
    /// 0x0000: the command was not understood (unknown or BR/EDR-only code). No reason data.
    case commandNotUnderstood
    /// 0x0001: the command exceeded the signalling MTU; carries the sender's signalling MTU.
    case signalingMTUExceeded(actualMTU: UInt16)
    /// 0x0002: the command referred to an invalid channel; carries the local and remote
    /// endpoints, relative to the sender of the Command Reject.
    case invalidCID(localCID: L2CAPChannelID, remoteCID: L2CAPChannelID)
    /// A reason reserved for future use, with whatever reason data came with it.
    case other(reason: UInt16, data: [UInt8])

    public static let code = LESignalingCode.commandReject

    /// The Reason field.
    public var reason: UInt16 {
        switch self {
        case .commandNotUnderstood: return 0x0000
        case .signalingMTUExceeded: return 0x0001
        case .invalidCID: return 0x0002
        case let .other(reason, _): return reason
        }
    }

    public init(data reader: inout ByteReader) throws(PacketDecodingError) {
        switch try reader.readUInt16() {
        case 0x0000: self = .commandNotUnderstood
        case 0x0001: self = .signalingMTUExceeded(actualMTU: try reader.readUInt16())
        case 0x0002:
            let local = L2CAPChannelID(rawValue: try reader.readUInt16())
            let remote = L2CAPChannelID(rawValue: try reader.readUInt16())
            self = .invalidCID(localCID: local, remoteCID: remote)
        case let reason: self = .other(reason: reason, data: reader.readRemaining())
        }
        try reader.expectEnd()
    }

    public func encodeData(into writer: inout ByteWriter) {
        writer.write(reason)
        switch self {
        case .commandNotUnderstood: break
        case let .signalingMTUExceeded(mtu): writer.write(mtu)
        case let .invalidCID(local, remote): writer.write(local.rawValue); writer.write(remote.rawValue)
        case let .other(_, data): writer.write(contentsOf: data)
        }
    }

    public var description: String {
        switch self {
        case .commandNotUnderstood: return "Command not understood"
        case let .signalingMTUExceeded(mtu): return "Signaling MTU exceeded (MTU \(mtu))"
        case let .invalidCID(local, remote): return "Invalid CID in request (local \(local), remote \(remote))"
        case let .other(reason, data): return "Reason \(Hex.format(reason, digits: 4)) [\(Hex.encode(data, separator: " "))]"
        }
    }
}
