import BluetoothCore
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

/// The resolving list commands (Core 6.0, Vol 4, Part E, 7.8.38-7.8.41, 7.8.44): stored and
/// reported, with their rules; not used for resolution yet.
@Suite("Virtual controller: resolving list", .timeLimit(.minutes(1)))
struct ResolvingListTests {
    let irk: [UInt8] = Array(0...15)

    private func add(_ host: HCITestHost, _ address: BluetoothAddress, type: AddressType = .public) async throws -> HCIStatus {
        try await host.complete(LEAddDeviceToResolvingListCommand(peerIdentityAddressType: type, peerIdentityAddress: address,
                                                                 peerIRK: irk, localIRK: irk)).status
    }

    private func address(_ last: UInt8) -> BluetoothAddress {
        BluetoothAddress(bytes: [last, 0, 0, 0, 0, 0xC0]) ?? .zero
    }

    @Test func entriesAreStoredRemovedAndCleared() async throws {
        let host = HCITestHost(VirtualLink.manual().addController(name: "dut", address: TestAddresses.central))
        try await host.initialize()
        #expect(try await host.run(LEReadResolvingListSizeCommand()).resolvingListSize == UInt8(ResolvingList.capacity))
        #expect(try await add(host, address(1)) == .success)
        #expect(try await add(host, address(1), type: .random) == .success, "the same address as another type is another identity")
        #expect(try await add(host, address(1)) == .invalidCommandParameters, "one entry per identity")
        #expect(host.controller.resolvingList == [DeviceAddress(address(1), type: .public), DeviceAddress(address(1), type: .random)])
        #expect(try await host.complete(LERemoveDeviceFromResolvingListCommand(peerIdentityAddressType: .public, peerIdentityAddress: address(1))).status == .success)
        #expect(try await host.complete(LERemoveDeviceFromResolvingListCommand(peerIdentityAddressType: .public, peerIdentityAddress: address(1))).status
            == .unknownConnectionIdentifier)
        #expect(host.controller.resolvingList == [DeviceAddress(address(1), type: .random)])
        for last in 2...UInt8(ResolvingList.capacity) { #expect(try await add(host, address(last)) == .success) }
        #expect(try await add(host, address(0xF0)) == .memoryCapacityExceeded)
        #expect(try await host.complete(LEClearResolvingListCommand()).status == .success)
        #expect(host.controller.resolvingList.isEmpty)

        #expect(try await host.complete(LESetAddressResolutionEnableCommand(enable: true)).status == .success)
        #expect(host.controller.isAddressResolutionEnabled)
        #expect(try await add(host, address(1)) == .success)
        // HCI Reset empties the list and turns resolution off.
        try await host.complete(ResetCommand())
        #expect(host.controller.resolvingList.isEmpty)
        #expect(!host.controller.isAddressResolutionEnabled)
    }

    @Test func notChangedWhileResolvingAndAdvertising() async throws {
        let host = HCITestHost(VirtualLink.manual().addController(name: "dut", address: TestAddresses.central))
        try await host.initialize()
        try await host.advertise()
        // Switching resolution is never allowed while advertising (7.8.44).
        #expect(try await host.complete(LESetAddressResolutionEnableCommand(enable: true)).status == .commandDisallowed)
        // With resolution off the list may change.
        #expect(try await add(host, address(1)) == .success)
        #expect(try await host.complete(LESetAdvertisingEnableCommand(enable: false)).status == .success)
        #expect(try await host.complete(LESetAddressResolutionEnableCommand(enable: true)).status == .success)
        #expect(try await host.complete(LESetAdvertisingEnableCommand(enable: true)).status == .success)
        // With resolution on, not while advertising (7.8.38-7.8.40).
        #expect(try await add(host, address(2)) == .commandDisallowed)
        #expect(try await host.complete(LERemoveDeviceFromResolvingListCommand(peerIdentityAddressType: .public, peerIdentityAddress: address(1))).status == .commandDisallowed)
        #expect(try await host.complete(LEClearResolvingListCommand()).status == .commandDisallowed)
        #expect(host.controller.resolvingList == [DeviceAddress(address(1), type: .public)])
    }
}
