import BluetoothCore
@testable import BluetoothTransport
import Glibc
import Testing

/// The kernel's HCI device structures, decoded from the bytes the ioctls fill in (laid out as
/// include/net/bluetooth/hci_sock.h declares them on a little-endian Linux machine), and the
/// advice `bluejay adapters` gives.
@Suite("HCI adapters")
struct HCIAdaptersTests {
    /// `hci_dev_info` of a USB adapter hci0, 00:1A:7D:DA:71:13, up and running (flags 0x0005),
    /// ACL 1021 x 8, with non-zero statistics after it.
    static let usbAdapterUp: [UInt8] = Hex.decode("""
        0000 6863 6930 0000 0000 1371 da7d 1a00 0500 0000 01ff ffff fefe \
        ff7f 8700 0000 18cc 0000 0f00 0000 0000 0000 fd03 0800 4000 0a00 \
        0000 0000 0000 0000 2c01 0000 1200 0000 0000 0000 0000 0000 0000 \
        0000 a01a 0000 5003 0000 0000 0000
        """.replacingOccurrences(of: " ", with: "")) ?? []

    @Test func deviceInfoDecodesIndexNameAddressStateAndBuffers() throws {
        #expect(Self.usbAdapterUp.count == HCIDeviceInfo.size)
        let info = try HCIDeviceInfo.decode(Self.usbAdapterUp)
        #expect(info.index == 0)
        #expect(info.name == "hci0")
        #expect(info.address.description == "00:1A:7D:DA:71:13")
        #expect(info.isUp)
        #expect(info.isRunning)
        #expect(info.bus == "USB")
        #expect(info.aclMTU == 1021)
        #expect(info.aclPackets == 8)
    }

    @Test func aDownAdapterOnUARTDecodes() throws {
        var bytes = HCIDeviceInfo.request(index: 3)
        bytes.replaceSubrange(2..<6, with: Array("hci3".utf8))
        bytes.replaceSubrange(10..<16, with: [0x66, 0x55, 0x44, 0x33, 0x22, 0x11])
        bytes[16] = 0x04  // HCI_RUNNING only
        bytes[20] = 0x03  // HCI_UART, primary
        let info = try HCIDeviceInfo.decode(bytes)
        #expect(info.index == 3)
        #expect(info.name == "hci3")
        #expect(info.address.description == "11:22:33:44:55:66")
        #expect(!info.isUp)
        #expect(info.isRunning)
        #expect(info.bus == "UART")
    }

    @Test func shortDeviceInfoIsATypedError() {
        #expect(throws: PacketDecodingError.self) { _ = try HCIDeviceInfo.decode(Array(Self.usbAdapterUp.prefix(91))) }
    }

    @Test func theDeviceListRequestAsksForSixteenAndTheAnswerDecodes() throws {
        let request = HCIDeviceList.request()
        #expect(request.count == 4 + 16 * 8)
        #expect(request.prefix(2) == [16, 0])
        // Two adapters, hci0 (up) and hci1 (down), as the kernel fills the buffer in.
        var answer = request
        answer.replaceSubrange(0..<2, with: [2, 0])
        answer.replaceSubrange(4..<12, with: [0, 0, 0, 0, 0x05, 0, 0, 0])
        answer.replaceSubrange(12..<20, with: [1, 0, 0, 0, 0x00, 0, 0, 0])
        let list = try HCIDeviceList.decode(answer)
        #expect(list == HCIDeviceList(devices: [(0, 5), (1, 0)]))
        #expect(try HCIDeviceList.decode(HCIDeviceList.request(count: 0)).devices.isEmpty)
        // A count the buffer cannot hold is refused, not read past.
        #expect(throws: PacketDecodingError.self) { _ = try HCIDeviceList.decode([3, 0, 0, 0]) }
    }

    @Test func anAdapterUpInBlueZGetsTheCommandsThatFreeIt() throws {
        let info = try HCIDeviceInfo.decode(Self.usbAdapterUp)
        let advice = AdapterAdvice(adapter: info, hasCapability: false, daemonRunning: true, executable: "/usr/local/bin/bluejay")
        #expect(!advice.isReady)
        #expect(advice.steps.count == 3)
        #expect(advice.steps[0].contains("sudo btmgmt --index 0 power off") && advice.steps[0].contains("bluetoothctl power off"))
        #expect(advice.steps[1].contains("powers it on again") && advice.steps[1].contains("sudo systemctl stop bluetooth"))
        #expect(advice.steps[2].contains("sudo setcap cap_net_admin+ep /usr/local/bin/bluejay"))
    }

    /// The kernel answers EBUSY also while another program holds the user channel (a second
    /// bluejay): then BlueZ is not the one to ask.
    @Test func anAdapterHeldThroughItsUserChannelIsNotBlamedOnBlueZ() throws {
        let info = try HCIDeviceInfo.decode(Self.usbAdapterUp)
        let advice = AdapterAdvice(adapter: info, hasCapability: true, daemonRunning: true, userChannelInUse: true)
        #expect(!advice.isReady)
        #expect(advice.steps.count == 1)
        #expect(advice.steps[0].contains("HCI user channel") && advice.steps[0].contains("end that program"))
        #expect(!advice.steps.joined().contains("BlueZ") && !advice.steps.joined().contains("btmgmt"))
    }

    // MARK: The management interface's index lists

    @Test func theIndexListCommandIsAHeaderForNoController() {
        // Opcode 0x0003, index MGMT_INDEX_NONE, no parameters (BlueZ doc/mgmt-api.txt).
        #expect(ManagementIndexList.command(ManagementIndexList.readIndexList) == [0x03, 0x00, 0xFF, 0xFF, 0x00, 0x00])
        #expect(ManagementIndexList.command(ManagementIndexList.readUnconfiguredIndexList) == [0x36, 0x00, 0xFF, 0xFF, 0x00, 0x00])
    }

    @Test func anIndexListAnswerDecodes() throws {
        // Command Complete (0x0001) for 0x0003, status 0, two controllers: hci0 and hci2.
        let answer: [UInt8] = [0x01, 0x00, 0xFF, 0xFF, 0x09, 0x00, 0x03, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x00]
        #expect(try ManagementIndexList.reply(answer, to: ManagementIndexList.readIndexList) == .indexes([0, 2]))
        // None listed.
        let empty: [UInt8] = [0x01, 0x00, 0xFF, 0xFF, 0x05, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00]
        #expect(try ManagementIndexList.reply(empty, to: ManagementIndexList.readIndexList) == .indexes([]))
        // The answer to another command, and another event (Index Added, 0x0004), are not it.
        #expect(try ManagementIndexList.reply(answer, to: ManagementIndexList.readUnconfiguredIndexList) == .unrelated)
        #expect(try ManagementIndexList.reply([0x04, 0x00, 0x01, 0x00, 0x00, 0x00], to: ManagementIndexList.readIndexList) == .unrelated)
        // Command Status with Permission Denied (0x14).
        let refused: [UInt8] = [0x02, 0x00, 0xFF, 0xFF, 0x03, 0x00, 0x36, 0x00, 0x14]
        #expect(try ManagementIndexList.reply(refused, to: ManagementIndexList.readUnconfiguredIndexList) == .refused(status: 0x14))
    }

    @Test func aMalformedIndexListAnswerIsATypedError() {
        // The count says three controllers, the parameters hold one.
        let short: [UInt8] = [0x01, 0x00, 0xFF, 0xFF, 0x07, 0x00, 0x03, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00]
        #expect(throws: PacketDecodingError.self) { _ = try ManagementIndexList.reply(short, to: ManagementIndexList.readIndexList) }
        // The header's length disagrees with the packet.
        #expect(throws: PacketDecodingError.self) {
            _ = try ManagementIndexList.reply([0x01, 0x00, 0xFF, 0xFF, 0x20, 0x00, 0x03, 0x00], to: ManagementIndexList.readIndexList)
        }
        // Trailing octets after the list.
        let trailing: [UInt8] = [0x01, 0x00, 0xFF, 0xFF, 0x08, 0x00, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x07]
        #expect(throws: PacketDecodingError.self) { _ = try ManagementIndexList.reply(trailing, to: ManagementIndexList.readIndexList) }
        #expect(throws: PacketDecodingError.self) { _ = try ManagementIndexList.reply([0x01, 0x00], to: ManagementIndexList.readIndexList) }
    }

    /// These machines usually have no AF_BLUETOOTH: asking is `nil`, never a crash or a hang.
    @Test func askingTheManagementInterfaceHereEndsCleanly() {
        if let indexes = HCIAdapters.managementIndexes() {
            #expect(indexes.allSatisfy { $0 < 0xFFFF })
        }
    }

    @Test func aDownAdapterWithTheCapabilityIsReady() throws {
        var info = try HCIDeviceInfo.decode(Self.usbAdapterUp)
        info.flags = 0
        let advice = AdapterAdvice(adapter: info, hasCapability: true, daemonRunning: false)
        #expect(advice.isReady)
        #expect(advice.steps == ["ready: use --hci hci0"])
    }

    @Test func theCapabilityIsReadFromTheEffectiveSet() {
        #expect(AdapterAdvice.hasNetworkAdmin(procStatus: "Name:\tx\nCapEff:\t000001ffffffffff\n") == true)
        #expect(AdapterAdvice.hasNetworkAdmin(procStatus: "CapInh:\t0000000000001000\nCapEff:\t0000000000000000\n") == false)
        #expect(AdapterAdvice.hasNetworkAdmin(procStatus: "CapEff:\t0000000000001000") == true)
        #expect(AdapterAdvice.hasNetworkAdmin(procStatus: "Name:\tx\n") == nil)
    }

    /// These machines have no adapter and usually no AF_BLUETOOTH: listing says so with a
    /// typed error or an empty list, never a crash.
    @Test func listingOnThisMachineEndsCleanly() {
        do {
            let adapters = try HCIAdapters.list()
            for adapter in adapters { #expect(adapter.name == "hci\(adapter.index)") }
        } catch let .openFailed(_, code, hint) {
            #expect([EAFNOSUPPORT, EPERM, EACCES].contains(code))
            #expect(!hint.isEmpty)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }
}
