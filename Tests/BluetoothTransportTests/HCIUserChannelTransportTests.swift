@testable import BluetoothTransport
import Glibc
import Testing

/// No adapter is available where these tests run, so opening one must fail cleanly with an
/// error that tells the user what to do.
@Suite("HCI user channel transport", .timeLimit(.minutes(1)))
struct HCIUserChannelTransportTests {
    @Test func openingAMissingAdapterFailsWithAnActionableHint() throws {
        let error = try #require(throws: TransportError.self) { _ = try SystemTransports.open("hci99") }
        let failure = try #require(error.openFailure, "got \(error)")
        // Which one depends on the kernel and privileges: no Bluetooth at all, no
        // CAP_NET_ADMIN, or no adapter with that index.
        #expect([ENODEV, EPERM, EACCES, EAFNOSUPPORT, EBUSY].contains(failure.errno), "got \(error)")
        #expect(!failure.hint.isEmpty)
        #expect(failure.hint == HCIUserChannelTransport.hint(for: failure.errno, index: 99))
        #expect(error.description.hasPrefix("cannot open hci99: "))
        #expect(error.description.contains(failure.hint))
    }

    @Test func reservedIndexIsInvalidSpecification() throws {
        let error = try #require(throws: TransportError.self) { _ = try HCIUserChannelTransport.open(index: 0xFFFF) }
        #expect(error.invalidSpecificationReason != nil, "got \(error)")
    }

    @Test(arguments: [
        (EPERM, "setcap cap_net_admin+eip"),
        (EACCES, "CAP_NET_ADMIN"),
        (EBUSY, "btmgmt --index 3 power off"),
        (EBUSY, "bluetoothctl power off"),
        (EBUSY, "systemctl stop bluetooth"),
        (ENODEV, "ls /sys/class/bluetooth"),
        (EAFNOSUPPORT, "no Bluetooth support"),
        (EUSERS, "Another program"),
        (ERFKILL, "rfkill unblock"),
    ])
    func hintsSayWhatToDo(code: Int32, advice: String) {
        #expect(HCIUserChannelTransport.hint(for: code, index: 3).contains(advice))
    }

    @Test func busyBecauseAnotherProgramHoldsTheUserChannel() {
        let hint = HCIUserChannelTransport.hint(for: EBUSY, index: 1, userChannelInUse: true)
        #expect(hint.contains("Another program holds hci1 through its HCI user channel"))
        #expect(!hint.contains("BlueZ") && !hint.contains("btmgmt"))
        // Unknown or not: BlueZ is the likely holder.
        #expect(HCIUserChannelTransport.hint(for: EBUSY, index: 1, userChannelInUse: false).contains("btmgmt --index 1 power off"))
        #expect(HCIUserChannelTransport.hint(for: EBUSY, index: 1) == HCIUserChannelTransport.hint(for: EBUSY, index: 1, userChannelInUse: nil))
    }

    @Test func socketAddressHasTheKernelLayout() {
        // struct sockaddr_hci: three 16-bit fields, 6 bytes (include/net/bluetooth/hci_sock.h).
        typealias Address = HCIUserChannelTransport.SocketAddress
        #expect(MemoryLayout<Address>.size == 6)
        #expect(MemoryLayout<Address>.offset(of: \Address.family) == 0)
        #expect(MemoryLayout<Address>.offset(of: \Address.device) == 2)
        #expect(MemoryLayout<Address>.offset(of: \Address.channel) == 4)
        #expect(HCIUserChannelTransport.addressFamilyBluetooth == 31)
        #expect(HCIUserChannelTransport.protocolHCI == 1)
        #expect(HCIUserChannelTransport.channelUser == 1)
    }
}
