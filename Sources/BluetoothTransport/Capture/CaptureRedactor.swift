/// Finds the key material in HCI traffic, so that a capture can blank it in the copy it writes
/// (``HCICapture/KeyMaterial/blanked``): every octet of a key becomes 0x00, every length and
/// every other field stays, so Wireshark decodes the file as before.
///
/// It sits at the transport boundary and knows only H4 framing and offsets: the few HCI
/// commands and events that carry keys, and the Security Manager PDUs inside ACL data (L2CAP
/// CID 0x0006), followed fragment by fragment per connection and direction, since a peer may cut
/// a PDU anywhere. Where it cannot tell (a continuation whose start it did not see, because
/// the capture dropped packets or the peer sent an orphan), it blanks the whole fragment.
///
/// What is blanked:
/// - HCI: the Long_Term_Key of LE Enable Encryption and LE Long Term Key Request Reply; the Key
///   of LE Encrypt and the Encrypted_Data of its Command Complete; both IRKs of LE Add Device
///   To Resolving List; the DH_Key of LE Generate DHKey Complete; BR/EDR link keys (Link Key
///   Request Reply, Link Key Notification) and OOB data (Remote OOB (Extended) Data Request
///   Reply, Read Local OOB (Extended) Data's Command Complete).
/// - SMP (Core 6.0, Vol 3, Part H, 3.5 and 3.6): the value of Pairing Confirm, Pairing Random,
///   Pairing DHKey Check, Encryption Information (LTK), Identity Information (IRK) and Signing
///   Information (CSRK). What identifies a key but is no secret stays (EDIV and Rand, the
///   identity address, public keys).
struct CaptureRedactor: Sendable {
    /// Where a connection's L2CAP PDU stands, in one direction.
    private struct Cursor: Sendable {
        /// The octets of the PDU seen so far.
        var offset = 0
        /// Its first octets: the basic header (Length, CID) and the SMP code.
        var prefix: [UInt8] = []

        var length: Int? { prefix.count >= 2 ? Int(prefix[0]) | Int(prefix[1]) << 8 : nil }
        var isSecurityManager: Bool { prefix.count >= 4 && prefix[2] == 0x06 && prefix[3] == 0x00 }
    }

    private struct Stream: Hashable, Sendable {
        var handle: UInt16
        var received: Bool
    }

    /// Per connection and direction; a missing entry means the next fragment must start a PDU.
    private var cursors: [Stream: Cursor] = [:]
    /// The capture's drop count when the last packet came: a change means packets were lost.
    private(set) var dropsSeen: UInt32 = 0

    /// The SMP codes whose 16 octets after the code are secret (Vol 3, Part H, 3.5.3, 3.5.4,
    /// 3.5.7, 3.6.2, 3.6.4, 3.6.6).
    static let secretSecurityManagerCodes: Set<UInt8> = [0x03, 0x04, 0x06, 0x08, 0x0A, 0x0D]

    /// Secret parameter ranges of HCI commands, by opcode (Core 6.0, Vol 4, Part E).
    static let commandSecrets: [UInt16: [Range<Int>]] = [
        0x2019: [12..<28],         // LE Enable Encryption (7.8.24): Long_Term_Key after handle, Rand, EDIV
        0x201A: [2..<18],          // LE Long Term Key Request Reply (7.8.25)
        0x2017: [0..<16],          // LE Encrypt (7.8.22): Key
        0x2027: [7..<23, 23..<39], // LE Add Device To Resolving List (7.8.38): Peer_IRK, Local_IRK
        0x040B: [6..<22],          // Link Key Request Reply (7.1.10)
        0x0430: [6..<38],          // Remote OOB Data Request Reply (7.1.34): C, R
        0x045D: [6..<70],          // Remote OOB Extended Data Request Reply (7.1.53): C and R, P-192 and P-256
    ]

    /// Secret return parameter ranges of Command Complete, by the command's opcode.
    static let returnSecrets: [UInt16: Range<Int>] = [
        0x2017: 1..<17, // LE Encrypt: Encrypted_Data
        0x0C57: 1..<33, // Read Local OOB Data (7.3.60): C, R
        0x0C7D: 1..<65, // Read Local OOB Extended Data (7.3.95)
    ]

    /// The capture dropped packets before the next one (`total` so far): fragments in flight
    /// cannot be followed.
    mutating func packetsWereLost(total: UInt32) {
        cursors.removeAll()
        dropsSeen = total
    }

    /// The ranges of `packet.bytes` (the packet after its H4 indicator) that hold key
    /// material. Fed every packet of the capture in order, each direction as it went.
    mutating func secretRanges(in packet: H4Packet, received: Bool) -> [Range<Int>] {
        let bytes = packet.bytes
        switch packet.indicator {
        case .command:
            // Opcode, Parameter_Total_Length, parameters (Vol 4, Part E, 5.4.1).
            guard let opcode = Self.uint16(bytes, at: 0), let secrets = Self.commandSecrets[opcode] else { return [] }
            return Self.clamp(secrets.map { ($0.lowerBound + 3)..<($0.upperBound + 3) }, to: bytes.count)
        case .event:
            return eventSecrets(bytes)
        case .acl:
            return aclSecrets(bytes, received: received)
        case .sco, .iso:
            return []
        }
    }

    private func eventSecrets(_ bytes: ArraySlice<UInt8>) -> [Range<Int>] {
        // Event_Code, Parameter_Total_Length, parameters (Vol 4, Part E, 5.4.4).
        guard let code = Self.byte(bytes, at: 0) else { return [] }
        switch code {
        case 0x0E:
            // Command Complete (7.7.14): Num_HCI_Command_Packets, Command_Opcode, return parameters.
            guard let opcode = Self.uint16(bytes, at: 3), let secret = Self.returnSecrets[opcode] else { return [] }
            return Self.clamp([(secret.lowerBound + 5)..<(secret.upperBound + 5)], to: bytes.count)
        case 0x18:
            // Link Key Notification (7.7.24): BD_ADDR, Link_Key, Key_Type.
            return Self.clamp([8..<24], to: bytes.count)
        case 0x3E where Self.byte(bytes, at: 2) == 0x09:
            // LE Generate DHKey Complete (7.7.65.9): Subevent_Code, Status, DH_Key.
            return Self.clamp([4..<36], to: bytes.count)
        default:
            return []
        }
    }

    private mutating func aclSecrets(_ bytes: ArraySlice<UInt8>, received: Bool) -> [Range<Int>] {
        // Handle and flags, Data_Total_Length, data (Vol 4, Part E, 5.4.2).
        guard let header = Self.uint16(bytes, at: 0) else { return [] }
        let stream = Stream(handle: header & 0x0FFF, received: received)
        let isStart = (header >> 12) & 0x3 != 0x1
        let dataStart = 4
        guard bytes.count > dataStart else { return [] }
        var cursor: Cursor
        if isStart {
            cursor = Cursor()
        } else if let current = cursors[stream] {
            cursor = current
        } else {
            // A continuation of a PDU not seen from its start: it may be anything.
            return [dataStart..<bytes.count]
        }
        var secrets: [Range<Int>] = []
        var index = dataStart
        while index < bytes.count {
            let offset = cursor.offset
            if offset < 5 {
                cursor.prefix.append(bytes[bytes.startIndex + index])
            } else if cursor.isSecurityManager, Self.secretSecurityManagerCodes.contains(cursor.prefix[4]), (5..<21).contains(offset) {
                // The 16 octets after the SMP code, as far as this fragment holds them.
                let end = min(bytes.count, index + (21 - offset))
                secrets.append(index..<end)
                cursor.offset += end - index
                index = end
                continue
            }
            cursor.offset += 1
            index += 1
        }
        if let length = cursor.length, cursor.offset >= 4 + length {
            cursors[stream] = nil
        } else {
            cursors[stream] = cursor
        }
        return secrets
    }

    private static func byte(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt8? {
        offset < bytes.count ? bytes[bytes.startIndex + offset] : nil
    }

    private static func uint16(_ bytes: ArraySlice<UInt8>, at offset: Int) -> UInt16? {
        guard offset + 1 < bytes.count else { return nil }
        return UInt16(bytes[bytes.startIndex + offset]) | UInt16(bytes[bytes.startIndex + offset + 1]) << 8
    }

    /// The ranges cut to a packet of `count` octets (a short packet keeps what it has).
    private static func clamp(_ ranges: [Range<Int>], to count: Int) -> [Range<Int>] {
        ranges.compactMap { range in
            let clamped = range.clamped(to: 0..<count)
            return clamped.isEmpty ? nil : clamped
        }
    }
}
