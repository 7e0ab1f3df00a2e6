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

    /// The adapters the kernel's management interface lists, configured or not (see
    /// ``ManagementIndexList``): every adapter but those whose HCI user channel a program holds
    /// (and those the kernel is still setting up). `nil` when it cannot be asked: no Bluetooth,
    /// a refused socket, or no answer within a second. Needs no privilege.
    public static func managementIndexes() -> Set<UInt16>? {
        let type = Int32(SOCK_RAW.rawValue | SOCK_CLOEXEC.rawValue)
        let socket = Glibc.socket(HCIUserChannelTransport.addressFamilyBluetooth, type, HCIUserChannelTransport.protocolHCI)
        guard socket >= 0 else { return nil }
        defer { SystemCalls.closeDescriptor(socket) }
        var address = HCIUserChannelTransport.SocketAddress(
            family: sa_family_t(HCIUserChannelTransport.addressFamilyBluetooth), device: HCIUserChannelTransport.deviceNone,
            channel: channelControl)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<HCIUserChannelTransport.SocketAddress>.size))
            }
        }
        guard bound == 0 else { return nil }
        var indexes = Set<UInt16>()
        for opcode in [ManagementIndexList.readIndexList, ManagementIndexList.readUnconfiguredIndexList] {
            let command = ManagementIndexList.command(opcode)
            guard command.withUnsafeBytes({ Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == command.count else {
                return nil
            }
            switch managementReply(socket, to: opcode) {
            case let .indexes(listed)?: indexes.formUnion(listed)
            // The unconfigured list is an extra; an adapter is rarely there.
            case .refused? where opcode == ManagementIndexList.readUnconfiguredIndexList: continue
            default: return nil
            }
        }
        return indexes
    }

    /// HCI_CHANNEL_CONTROL, include/net/bluetooth/hci_sock.h: the management interface.
    static let channelControl: UInt16 = 3

    /// The answer to `opcode`, skipping the events that come before it; `nil` after a second.
    private static func managementReply(_ socket: Int32, to opcode: UInt16) -> ManagementIndexList.Reply? {
        let deadline = ContinuousClock.now.advanced(by: .seconds(1))
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            var descriptors = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, let ready = try? SystemCalls.poll(&descriptors, timeout: left), ready > 0 else { return nil }
            let count = buffer.withUnsafeMutableBytes { Glibc.recv(socket, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return nil }
            switch try? ManagementIndexList.reply(Array(buffer[0..<count]), to: opcode) {
            case .unrelated?: continue
            case let reply?: return reply
            case nil: return nil
            }
        }
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
