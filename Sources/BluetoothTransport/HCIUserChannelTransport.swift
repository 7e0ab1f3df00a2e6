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
            // The kernel says EBUSY whether BlueZ has the adapter up or another program holds its
            // user channel; the management interface tells them apart.
            let held = code == EBUSY ? HCIAdapters.managementIndexes().map { !$0.contains(index) } : nil
            throw .openFailed(name, errno: code, hint: hint(for: code, index: index, userChannelInUse: held))
        }
        enlargeReceiveBuffer(socket)
        return try FileDescriptorTransport(name: name, fileDescriptor: socket, framing: .datagram)
    }

    /// What the user channel's socket may queue for us: 4 MiB (the kernel doubles it for its
    /// bookkeeping). The kernel drops a packet it cannot queue (`hci_send_to_sock` in hci_sock.c: no
    /// flow control towards the socket), so a peer's burst of notifications while the process
    /// is busy would be lost with the default (`net.core.rmem_default`, about 200 KiB, a few
    /// hundred ACL packets). `SO_RCVBUFFORCE` passes `rmem_max` with `CAP_NET_ADMIN`, which the
    /// user channel needs anyway; without it `SO_RCVBUF` gets what `rmem_max` allows.
    static func enlargeReceiveBuffer(_ socket: Int32) {
        var size: Int32 = 4 << 20
        let length = socklen_t(MemoryLayout<Int32>.size)
        if setsockopt(socket, SOL_SOCKET, SO_RCVBUFFORCE, &size, length) != 0 {
            _ = setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &size, length)
        }
    }

    /// What to do about `code` from socket(2) or bind(2); for EBUSY, `userChannelInUse` says
    /// whether a program holds the adapter through its user channel (`nil`: unknown, BlueZ
    /// assumed).
    static func hint(for code: Int32, index: UInt16, userChannelInUse: Bool? = nil) -> String {
        switch code {
        case EBUSY where userChannelInUse == true:
            return "Another program holds hci\(index) through its HCI user channel (a bluejay still running?): "
                + "end that program, then try again"
        case EAFNOSUPPORT:
            return "This kernel has no Bluetooth support (try `sudo modprobe bluetooth`); "
                + "containers and VMs usually cannot see the host's adapters"
        case EPERM, EACCES:
            return "The HCI user channel needs CAP_NET_ADMIN: run as root or grant it with "
                + "`sudo setcap cap_net_admin+eip $(which bluejay)`"
        case EBUSY:
            // The kernel refuses the user channel of an adapter that is up (hci_sock.c). BlueZ's
            // bluetoothd powers adapters on, and again when the user channel lets one go.
            return "hci\(index) is up, held by BlueZ: power it off with `sudo btmgmt --index \(index) power off` "
                + "(or `bluetoothctl power off`), then open it again; bluetoothd powers adapters on again, "
                + "so stop it to keep the adapter for Bluejay: `sudo systemctl stop bluetooth`"
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
