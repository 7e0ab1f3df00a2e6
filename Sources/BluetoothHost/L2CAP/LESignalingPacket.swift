import BluetoothCore

/// One command on the LE signalling channel (Core 6.0, Vol 3, Part A, 4): Code, Identifier,
/// a 2-octet Length and the data. On the LE signalling channel each C-frame carries exactly
/// one command (Vol 3, Part A, 4), so the length must cover the rest of the frame.
///
/// This is the untyped envelope; ``command`` gives the typed ``LESignalingCommand``.
public struct LESignalingPacket: Sendable, Equatable, CustomStringConvertible {
    public var code: LESignalingCode
    /// Matches a response to its request. 0x00 is never valid in a command (Vol 3, Part A, 4).
    public var identifier: UInt8
    public var data: [UInt8]

    public init(code: LESignalingCode, identifier: UInt8, data: [UInt8]) {
        self.code = code
        self.identifier = identifier
        self.data = data
    }

    /// Wraps a typed command.
    public init(identifier: UInt8, command: LESignalingCommand) {
        self.init(code: command.code, identifier: identifier, data: command.encodeData())
    }

    /// The C-frame payload (to send in an ``L2CAPBasicFrame`` on ``L2CAPChannelID/leSignaling``).
    public func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + data.count)
        writer.write(code.rawValue)
        writer.write(identifier)
        writer.write(UInt16(truncatingIfNeeded: data.count))
        writer.write(contentsOf: data)
        return writer.bytes
    }

    /// Decodes the payload of a C-frame. Throws when the header is short or the Length field
    /// disagrees with the bytes that follow.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> LESignalingPacket {
        var reader = ByteReader(bytes, context: "LE signaling packet")
        let code = LESignalingCode(rawValue: try reader.readUInt8())
        let identifier = try reader.readUInt8()
        let length = Int(try reader.readUInt16())
        guard reader.remainingCount == length else {
            throw .lengthMismatch(context: "LE signaling \(code.name)", declared: length, actual: reader.remainingCount)
        }
        return LESignalingPacket(code: code, identifier: identifier, data: reader.readRemaining())
    }

    /// The typed command. Codes this stack does not know, and BR/EDR-only codes, give
    /// ``LESignalingCommand/unknown(code:data:)``; a known code with malformed data throws.
    public var command: LESignalingCommand {
        get throws(PacketDecodingError) { try LESignalingCommand(code: code, data: data) }
    }

    public var description: String {
        "\(code) id=\(identifier) [\(Hex.encode(data, separator: " "))]"
    }
}
