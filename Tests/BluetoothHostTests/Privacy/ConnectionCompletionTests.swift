import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import Testing

/// What the host takes from the connection complete events: the address over the air (the one
/// SMP's c1 and f5 take) and, when the controller resolved it, the identity beside it.
@Suite("Connection complete events and resolution", .timeLimit(.minutes(1)))
struct ConnectionCompletionTests {
    static let identity = BluetoothAddress(rawValue: 0xC0FF_EE00_0001)
    static let rpa = BluetoothAddress(rawValue: 0x4A11_2233_4455)

    static func enhanced(_ type: AddressType, _ address: BluetoothAddress, peerRPA: BluetoothAddress) -> ConnectionCompletion {
        ConnectionCompletion(LEEnhancedConnectionCompleteEvent(
            connectionHandle: 0x40, role: .central, peerAddressType: type, peerAddress: address, peerResolvablePrivateAddress: peerRPA,
            connectionInterval: 24, peripheralLatency: 0, supervisionTimeout: 72))
    }

    @Test func aResolvedPeerKeepsBothAddresses() {
        // Core 6.0, Vol 4, Part E, 7.7.65.10: type 0x02, the identity, the private address apart.
        let resolved = Self.enhanced(.publicIdentity, Self.identity, peerRPA: Self.rpa)
        #expect(resolved.peer == DeviceAddress(Self.rpa, type: .random))
        #expect(resolved.resolvedIdentity == DeviceAddress(Self.identity, type: .public))
        // Rootcanal 1.10.0 reports the identity with its base type and the private address beside it.
        let quirk = Self.enhanced(.random, Self.identity, peerRPA: Self.rpa)
        #expect(quirk.peer == DeviceAddress(Self.rpa, type: .random))
        #expect(quirk.resolvedIdentity == DeviceAddress(Self.identity, type: .random))
    }

    @Test func aPeerAtItsIdentityAddressIsNotResolved() {
        // Type 0x03 with no private address: the resolving list named it, it used its identity.
        let atIdentity = Self.enhanced(.randomIdentity, Self.identity, peerRPA: .zero)
        #expect(atIdentity.peer == DeviceAddress(Self.identity, type: .random))
        #expect(atIdentity.resolvedIdentity == nil)
        let plain = Self.enhanced(.public, Self.identity, peerRPA: .zero)
        #expect(plain.peer == DeviceAddress(Self.identity, type: .public))
        #expect(plain.resolvedIdentity == nil)
    }
}
