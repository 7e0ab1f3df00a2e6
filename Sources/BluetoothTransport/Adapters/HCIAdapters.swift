#if canImport(Glibc)
import Glibc
import Foundation

/// The machine's HCI adapters as the kernel sees them, read with the HCI socket's ioctls
/// (`HCIGETDEVLIST`, `HCIGETDEVINFO` on an `AF_BLUETOOTH`/`BTPROTO_HCI` raw socket): no BlueZ
/// needed, and no privilege.
public enum HCIAdapters {
    // _IOR('H', 210, int) and _IOR('H', 211, int), include/net/bluetooth/hci_sock.h.
    static let getDeviceList: UInt = 0x8004_48D2
    static let getDeviceInfo: UInt = 0x8004_48D3

    /// Every adapter the kernel has, in index order. Throws ``TransportError/openFailed(_:errno:hint:)``
    /// when the kernel has no Bluetooth support (`EAFNOSUPPORT`) or refuses the socket.
    public static func list() throws(TransportError) -> [HCIDeviceInfo] {
        let name = "the kernel's HCI sockets"
        let type = Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue)
        let socket = Glibc.socket(HCIUserChannelTransport.addressFamilyBluetooth, type, HCIUserChannelTransport.protocolHCI)
        guard socket >= 0 else {
            let code = errno
            throw .openFailed(name, errno: code, hint: HCIUserChannelTransport.hint(for: code, index: 0))
        }
        defer { SystemCalls.closeDescriptor(socket) }
        var request = HCIDeviceList.request()
        guard request.withUnsafeMutableBytes({ deviceRequest(socket, getDeviceList, $0.baseAddress) }) == 0 else {
            throw .openFailed(name, errno: errno, hint: "HCIGETDEVLIST failed")
        }
        let list: HCIDeviceList
        do {
            list = try HCIDeviceList.decode(request)
        } catch {
            throw .openFailed(name, errno: EPROTO, hint: "unexpected HCIGETDEVLIST answer: \(error)")
        }
        var adapters: [HCIDeviceInfo] = []
        for device in list.devices {
            var info = HCIDeviceInfo.request(index: device.index)
            // An adapter unplugged between the two calls is left out.
            guard info.withUnsafeMutableBytes({ deviceRequest(socket, getDeviceInfo, $0.baseAddress) }) == 0,
                  let decoded = try? HCIDeviceInfo.decode(info) else { continue }
            adapters.append(decoded)
        }
        return adapters.sorted { $0.index < $1.index }
    }

    /// ioctl(2) with one pointer argument. Swift does not import C variadic functions, so the
    /// C library's `ioctl` is looked up and called through a prototype with that one argument
    /// (on Linux's x86-64 and AArch64 calling conventions a variadic callee reads it alike).
    private static func deviceRequest(_ descriptor: Int32, _ request: UInt, _ argument: UnsafeMutableRawPointer?) -> Int32 {
        typealias IOControl = @convention(c) (Int32, UInt, UnsafeMutableRawPointer?) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "ioctl") else {
            errno = ENOSYS
            return -1
        }
        return unsafeBitCast(symbol, to: IOControl.self)(descriptor, request, argument)
    }

    /// Whether this process may open the user channel: `CAP_NET_ADMIN` (bit 12) in the
    /// effective capabilities of /proc/self/status; `nil` when they cannot be read.
    public static func hasNetworkAdminCapability() -> Bool? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return AdapterAdvice.hasNetworkAdmin(procStatus: status)
    }

    /// Whether BlueZ's daemon runs: a process named `bluetoothd` in /proc.
    public static func isBluetoothDaemonRunning() -> Bool {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return false }
        return entries.contains { entry in
            guard entry.first?.isNumber == true,
                  let name = try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8) else { return false }
            return name.trimmingCharacters(in: .whitespacesAndNewlines) == "bluetoothd"
        }
    }
}
#endif
