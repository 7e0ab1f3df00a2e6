import BluetoothCore

/// ATT_HANDLE_VALUE_NTF (Core 6.0, Vol 3, Part F, 3.4.7.1): a value pushed by the server,
/// not confirmed.
public struct ATTHandleValueNotification: ATTPDUParameters {
    public static let opcode = ATTOpcode.handleValueNotification

    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        value = reader.readRemaining()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(contentsOf: value)
    }

    public var description: String { "\(ATTWire.hex(handle))=\(ATTWire.bytes(value))" }
}

/// ATT_HANDLE_VALUE_IND (Core 6.0, Vol 3, Part F, 3.4.7.2): a value pushed by the server;
/// the client answers with a confirmation, even when it discards the value.
public struct ATTHandleValueIndication: ATTPDUParameters {
    public static let opcode = ATTOpcode.handleValueIndication

    public var handle: UInt16
    public var value: [UInt8]

    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        handle = try reader.readUInt16()
        value = reader.readRemaining()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(handle)
        writer.write(contentsOf: value)
    }

    public var description: String { "\(ATTWire.hex(handle))=\(ATTWire.bytes(value))" }
}

/// ATT_HANDLE_VALUE_CFM (Core 6.0, Vol 3, Part F, 3.4.7.3). No parameters.
public struct ATTHandleValueConfirmation: ATTPDUParameters {
    public static let opcode = ATTOpcode.handleValueConfirmation

    public init() {}

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) { try reader.expectEnd() }

    public func encodeParameters(into writer: inout ByteWriter) {}

    public var description: String { "" }
}

/// ATT_MULTIPLE_HANDLE_VALUE_NTF (Core 6.0, Vol 3, Part F, 3.4.7.4): two or more values in
/// one notification, as Handle Length Value Tuples. The server never truncates a tuple, so
/// decoding requires every tuple complete, and the list at least 8 octets long (Table 3.41).
public struct ATTMultipleHandleValueNotification: ATTPDUParameters {
    public static let opcode = ATTOpcode.multipleHandleValueNotification

    /// One Handle Length Value Tuple (Vol 3, Part F, Table 3.42).
    public struct HandleValue: Hashable, Sendable {
        public var handle: UInt16
        public var value: [UInt8]

        public init(handle: UInt16, value: [UInt8]) {
            self.handle = handle
            self.value = value
        }
    }

    public var values: [HandleValue]

    public init(values: [HandleValue]) { self.values = values }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        guard reader.remainingCount >= 8 else {
            throw .truncated(context: reader.context, needed: 8, available: reader.remainingCount)
        }
        var values: [HandleValue] = []
        while !reader.isAtEnd {
            let handle = try reader.readUInt16()
            let length = Int(try reader.readUInt16())
            values.append(HandleValue(handle: handle, value: try reader.readBytes(length)))
        }
        self.values = values
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        for tuple in values {
            writer.write(tuple.handle)
            writer.write(UInt16(truncatingIfNeeded: tuple.value.count))
            writer.write(contentsOf: tuple.value)
        }
    }

    public var description: String {
        values.map { "\(ATTWire.hex($0.handle))=\(ATTWire.bytes($0.value))" }.joined(separator: " ")
    }
}
