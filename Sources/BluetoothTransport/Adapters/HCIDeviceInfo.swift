import BluetoothCore

/// The kernel's answer to `HCIGETDEVLIST`: `struct hci_dev_list_req { __u16 dev_num;
/// struct hci_dev_req dev_req[]; }` with `struct hci_dev_req { __u16 dev_id; __u32 dev_opt; }`
/// (include/net/bluetooth/hci_sock.h). In C layout: `dev_num` at 0, the entries from offset
/// 4, 8 bytes each (`dev_id` at 0, `dev_opt` at 4), in the machine's byte order (Linux on
/// the machines we run on: little-endian).
public struct HCIDeviceList: Sendable, Equatable {
    /// The most adapters asked for (the kernel's HCI_MAX_DEV).
    public static let maximumCount = 16
    static let entriesOffset = 4
    static let entrySize = 8

    /// The adapters' indexes (`hciN`) with their option words (the kernel's `hdev->flags`).
    public var devices: [(index: UInt16, options: UInt32)]

    public init(devices: [(index: UInt16, options: UInt32)]) {
        self.devices = devices
    }

    /// The request buffer: room for `count` entries, `dev_num` set to `count`.
    public static func request(count: Int = maximumCount) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: entriesOffset + count * entrySize)
        bytes[0] = UInt8(truncatingIfNeeded: count)
        bytes[1] = UInt8(truncatingIfNeeded: count >> 8)
        return bytes
    }

    /// Decodes the buffer the kernel filled in.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> HCIDeviceList {
        guard let count = ByteReader.uint16(in: bytes[...], at: 0) else {
            throw .truncated(context: "hci_dev_list_req", needed: 2, available: bytes.count)
        }
        let needed = entriesOffset + Int(count) * entrySize
        guard bytes.count >= needed else { throw .truncated(context: "hci_dev_list_req", needed: needed, available: bytes.count) }
        let devices = (0..<Int(count)).map { entry -> (index: UInt16, options: UInt32) in
            let offset = entriesOffset + entry * entrySize
            return (ByteReader.uint16(in: bytes[...], at: offset) ?? 0, ByteReader.integer(littleEndian: bytes[(offset + 4)...]))
        }
        return HCIDeviceList(devices: devices)
    }

    public static func == (lhs: HCIDeviceList, rhs: HCIDeviceList) -> Bool {
        lhs.devices.elementsEqual(rhs.devices) { $0.index == $1.index && $0.options == $1.options }
    }
}

/// The kernel's answer to `HCIGETDEVINFO`, `struct hci_dev_info` (include/net/bluetooth/hci_sock.h),
/// 92 bytes in C layout: `dev_id` u16 at 0, `name` char[8] at 2, `bdaddr` at 10 (6 bytes,
/// little-endian), `flags` u32 at 16, `type` u8 at 20, `features` u8[8] at 21, then (aligned)
/// `pkt_type` at 32, `link_policy` 36, `link_mode` 40, `acl_mtu` u16 44, `acl_pkts` 46,
/// `sco_mtu` 48, `sco_pkts` 50, and `struct hci_dev_stats` (ten u32) from 52.
public struct HCIDeviceInfo: Sendable, Equatable {
    public static let size = 92

    /// The adapter's index: `hci0` is 0.
    public var index: UInt16
    /// The kernel's name for it, `hci0`.
    public var name: String
    /// Its public address; all zeros while it has never been powered on.
    public var address: BluetoothAddress
    /// The kernel's state bits (`HCI_UP` is bit 0, `HCI_RUNNING` bit 2).
    public var flags: UInt32
    /// The bus (low nibble: 1 USB, 3 UART, …) and the device type (bits 4-5: 0 primary).
    public var type: UInt8
    /// The ACL buffer size and count the kernel read from the controller.
    public var aclMTU: UInt16
    public var aclPackets: UInt16

    public init(index: UInt16, name: String, address: BluetoothAddress, flags: UInt32, type: UInt8, aclMTU: UInt16, aclPackets: UInt16) {
        self.index = index
        self.name = name
        self.address = address
        self.flags = flags
        self.type = type
        self.aclMTU = aclMTU
        self.aclPackets = aclPackets
    }

    /// The adapter is up in the kernel (`HCI_UP`): BlueZ (the kernel's management interface)
    /// has it, and the user channel cannot be opened until it is taken down.
    public var isUp: Bool { flags & 1 << 0 != 0 }
    /// The transport to the controller is open (`HCI_RUNNING`).
    public var isRunning: Bool { flags & 1 << 2 != 0 }

    /// The bus the controller is on, as the kernel names it (`HCI_USB` …).
    public var bus: String {
        let names = ["virtual", "USB", "PC card", "UART", "RS-232", "PCI", "SDIO", "SPI", "I2C", "SMD", "virtio", "iPC"]
        let code = Int(type & 0x0F)
        return code < names.count ? names[code] : "bus \(code)"
    }

    /// Decodes the structure the kernel filled in. The request carries the index in `dev_id`.
    public static func decode(_ bytes: [UInt8]) throws(PacketDecodingError) -> HCIDeviceInfo {
        guard bytes.count >= size else { throw .truncated(context: "hci_dev_info", needed: size, available: bytes.count) }
        let slice = bytes[...]
        let nameBytes = bytes[2..<10].prefix { $0 != 0 }
        return HCIDeviceInfo(
            index: ByteReader.uint16(in: slice, at: 0) ?? 0,
            name: String(decoding: nameBytes, as: UTF8.self),
            address: BluetoothAddress(rawValue: ByteReader.integer(littleEndian: bytes[10..<16])),
            flags: ByteReader.integer(littleEndian: bytes[16...]),
            type: bytes[20],
            aclMTU: ByteReader.uint16(in: slice, at: 44) ?? 0,
            aclPackets: ByteReader.uint16(in: slice, at: 46) ?? 0
        )
    }

    /// The request buffer for adapter `index`: `dev_id` set, the rest zero.
    public static func request(index: UInt16) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes[0] = UInt8(truncatingIfNeeded: index)
        bytes[1] = UInt8(truncatingIfNeeded: index >> 8)
        return bytes
    }
}
