import BluetoothCore

/// The two packets of the kernel's Bluetooth management interface (the HCI control channel
/// that BlueZ's bluetoothd speaks; BlueZ's doc/mgmt-api.txt) that tell which adapters it lists:
/// Read Controller Index List (0x0003) and Read Unconfigured Controller Index List (0x0036).
///
/// The kernel takes an adapter out of both lists while a program holds its HCI user channel
/// (net/bluetooth/hci_sock.c calls mgmt_index_removed when the channel binds), so an adapter
/// that is up but in neither list is held through its user channel, not by BlueZ.
///
/// Every packet is a 6-octet header, opcode or event code, controller index and parameter
/// length (little-endian), then the parameters.
public enum ManagementIndexList {
    /// Read Controller Index List.
    public static let readIndexList: UInt16 = 0x0003
    /// Read Unconfigured Controller Index List.
    public static let readUnconfiguredIndexList: UInt16 = 0x0036
    /// The controller index of commands about no controller (MGMT_INDEX_NONE).
    static let noIndex: UInt16 = 0xFFFF
    static let commandCompleteEvent: UInt16 = 0x0001
    static let commandStatusEvent: UInt16 = 0x0002
    static let headerSize = 6

    /// What a packet read from the control channel says about the command `opcode`.
    public enum Reply: Equatable, Sendable {
        /// The command's answer: the listed controllers' indexes.
        case indexes([UInt16])
        /// The kernel refused the command (a management status code).
        case refused(status: UInt8)
        /// Another event, or the answer to another command.
        case unrelated
    }

    /// The command `opcode` with no parameters, for no controller.
    public static func command(_ opcode: UInt16) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize)
        writer.write(opcode)
        writer.write(noIndex)
        writer.write(UInt16(0))
        return writer.bytes
    }

    /// Reads a packet of the control channel as an answer to `opcode`.
    public static func reply(_ packet: [UInt8], to opcode: UInt16) throws(PacketDecodingError) -> Reply {
        var reader = ByteReader(packet, context: "management event")
        let event = try reader.readUInt16()
        _ = try reader.readUInt16()  // the controller index: none, for these commands
        let length = Int(try reader.readUInt16())
        guard reader.remainingCount == length else {
            throw .lengthMismatch(context: "management event", declared: length, actual: reader.remainingCount)
        }
        guard event == commandCompleteEvent || event == commandStatusEvent else { return .unrelated }
        guard try reader.readUInt16() == opcode else { return .unrelated }
        let status = try reader.readUInt8()
        guard status == 0 else { return .refused(status: status) }
        guard event == commandCompleteEvent else { return .unrelated }
        let count = Int(try reader.readUInt16())
        var indexes: [UInt16] = []
        for _ in 0..<count { indexes.append(try reader.readUInt16()) }
        try reader.expectEnd()
        return .indexes(indexes)
    }
}
