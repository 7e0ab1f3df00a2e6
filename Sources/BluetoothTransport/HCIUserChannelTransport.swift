#if canImport(Glibc)
import Glibc

/// Opens the Linux HCI user channel (`hciN`): exclusive, raw access to a local adapter,
/// bypassing BlueZ. The kernel requires `CAP_NET_ADMIN` and the adapter to be down in BlueZ.
///
/// The socket carries one whole H4-framed packet (indicator byte included) per read and per
/// write, so the transport uses ``FileDescriptorTransport/Framing/datagram`` framing.
public enum HCIUserChannelTransport {
    // Not exported by Glibc's module; values from the kernel's include/linux/socket.h,
    // include/net/bluetooth/bluetooth.h and include/net/bluetooth/hci.h.
    static let addressFamilyBluetooth: Int32 = 31  // AF_BLUETOOTH
    static let protocolHCI: Int32 = 1  // BTPROTO_HCI
    static let channelUser: UInt16 = 1  // HCI_CHANNEL_USER
    static let deviceNone: UInt16 = 0xFFFF  // HCI_DEV_NONE

    /// `struct sockaddr_hci { sa_family_t hci_family; unsigned short hci_dev; unsigned short hci_channel; }`
    /// Three 16-bit fields, so Swift lays it out exactly like C (6 bytes, no padding).
    struct SocketAddress {
        var family: sa_family_t
        var device: UInt16
        var channel: UInt16
    }

    /// Binds the user channel of adapter `index` (`hci0` is 0).
    public static func open(index: UInt16) throws(TransportError) -> FileDescriptorTransport {
        let name = TransportSpecification.hciUserChannel(index: index).description
        guard index != deviceNone else {
            throw .invalidSpecification(name, reason: "adapter index \(index) is reserved")
        }
        let type = Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue)
        let socket = Glibc.socket(addressFamilyBluetooth, type, protocolHCI)
        guard socket >= 0 else {
            let code = errno
            throw .openFailed(name, errno: code, hint: hint(for: code, index: index))
        }
        var address = SocketAddress(family: sa_family_t(addressFamilyBluetooth), device: index, channel: channelUser)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(socket, generic, socklen_t(MemoryLayout<SocketAddress>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            SystemCalls.closeDescriptor(socket)
            throw .openFailed(name, errno: code, hint: hint(for: code, index: index))
        }
        return try FileDescriptorTransport(name: name, fileDescriptor: socket, framing: .datagram)
    }

    static func hint(for code: Int32, index: UInt16) -> String {
        switch code {
        case EAFNOSUPPORT:
            return "This kernel has no Bluetooth support (try `sudo modprobe bluetooth`); "
                + "containers and VMs usually cannot see the host's adapters"
        case EPERM, EACCES:
            return "The HCI user channel needs CAP_NET_ADMIN: run as root or grant it with "
                + "`sudo setcap cap_net_admin+eip $(which bluejay)`"
        case EBUSY:
            return "hci\(index) is up in BlueZ; take it down with `sudo btmgmt --index \(index) power off` "
                + "(or `sudo hciconfig hci\(index) down`), or stop bluetoothd"
        case ENODEV:
            return "There is no adapter hci\(index); list the adapters with `ls /sys/class/bluetooth`"
        case EUSERS:
            return "Another program already holds the user channel of hci\(index)"
        case ERFKILL:
            return "hci\(index) is blocked by rfkill; unblock it with `sudo rfkill unblock bluetooth`"
        default:
            return ""
        }
    }
}
#endif
