import BluetoothCore
import BluetoothCrypto
import BluetoothHCI
@testable import BluetoothVirtual
import Testing

/// The resolving list commands (Core 6.0, Vol 4, Part E, 7.8.38-7.8.45, 7.8.77): stored and
/// reported, with their rules, and the resolution they make (Vol 6, Part B, 4.7).
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

    @Test func privacyModeAndTimeoutAreKeptWithTheirRules() async throws {
        let host = HCITestHost(VirtualLink.manual().addController(name: "dut", address: TestAddresses.central))
        try await host.initialize()
        let identity = DeviceAddress(address(1), type: .public)
        #expect(try await host.complete(LESetPrivacyModeCommand(peerIdentityAddressType: .public, peerIdentityAddress: address(1),
                                                                privacyMode: .device)).status == .unknownConnectionIdentifier, "not on the list (7.8.77)")
        #expect(try await add(host, address(1)) == .success)
        #expect(host.controller.privacyMode(of: identity) == .network, "network privacy mode once added")
        #expect(try await host.complete(LESetPrivacyModeCommand(peerIdentityAddressType: .public, peerIdentityAddress: address(1),
                                                                privacyMode: .device)).status == .success)
        #expect(host.controller.privacyMode(of: identity) == .device)
        #expect(host.controller.resolvablePrivateAddressTimeout == 900, "15 minutes after reset")
        #expect(try await host.complete(LESetResolvablePrivateAddressTimeoutCommand(timeout: 60)).status == .success)
        #expect(host.controller.resolvablePrivateAddressTimeout == 60)
        #expect(try await host.complete(LESetResolvablePrivateAddressTimeoutCommand(timeout: 0)).status == .invalidCommandParameters)
        #expect(try await host.complete(LESetResolvablePrivateAddressTimeoutCommand(timeout: 3601)).status == .invalidCommandParameters)
    }

    /// What the list makes of an address: a private address its IRK resolves becomes the
    /// identity (reported with type 0x02 or 0x03, beside the private address); the identity
    /// address itself is accepted in device privacy mode and ignored in network privacy mode
    /// when the peer has an IRK; nothing changes with resolution off.
    @Test func resolution() {
        let key: UInt128 = 0x0F0E_0D0C_0B0A_0908_0706_0504_0302_0100
        let identity = DeviceAddress(address(1), type: .random)
        var list = ResolvingList()
        #expect(list.add(.init(peerIdentity: identity, peerIRK: irk, localIRK: [UInt8](repeating: 0, count: 16))) == .success)
        let rpa = DeviceAddress(BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: key)), type: .random)
        let stranger = DeviceAddress(BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: key + 1)), type: .random)
        #expect(list.resolve(rpa) == .unresolved, "resolution off")
        list.isResolutionEnabled = true
        #expect(list.resolve(rpa) == .resolved(identity: identity, privateAddress: rpa.address), "the IRK is held least significant octet first")
        #expect(list.resolve(rpa).reported(rpa) == DeviceAddress(identity.address, type: .randomIdentity))
        #expect(list.resolve(rpa).privateAddress == rpa.address)
        #expect(list.resolve(stranger) == .unresolved)
        #expect(list.resolve(stranger).reported(stranger) == stranger)
        #expect(list.resolve(identity) == .ignored, "network privacy mode: a peer with an IRK is not accepted at its identity address")
        #expect(list.setPrivacyMode(.device, of: identity) == .success)
        #expect(list.resolve(identity) == .identity(identity))
        #expect(list.resolve(identity).reported(identity) == identity, "reported as it came")
    }
}
