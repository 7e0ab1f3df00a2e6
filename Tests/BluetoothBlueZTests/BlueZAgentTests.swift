@testable import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
@testable import DBus
import Synchronization
import Testing

/// Our Agent1 answers bluetoothd only: another client of the system bus that the policy lets call
/// us gets Rejected, the user is not asked, and no device is counted as authenticated.
@Suite("BlueZ: the pairing agent")
struct BlueZAgentTests {
    static let bluetoothd = ":1.7"
    static let device = DBusObjectPath(uncheckedPath: "/org/bluez/hci0/dev_C0_00_00_00_00_02")
    static let address = DeviceAddress(BluetoothAddress(rawValue: 0xC0_0000_0000_02), type: .random)

    /// Counts what the user was asked.
    final class CountingAgent: PairingAgent {
        let asked = Mutex(0)
        func passkey(for peer: DeviceAddress) async -> UInt32? {
            asked.withLock { $0 += 1 }
            return 123_456
        }
        func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
            asked.withLock { $0 += 1 }
            return true
        }
        func display(passkey: UInt32, for peer: DeviceAddress) async { asked.withLock { $0 += 1 } }
        func shouldAcceptPairing(with peer: DeviceAddress) async -> Bool {
            asked.withLock { $0 += 1 }
            return true
        }
    }

    static func call(_ member: String, from sender: String?, _ arguments: [DBusValue]) -> DBusMethodCall {
        var message = DBusMessage.methodCall(destination: ":1.9", path: BlueZAgent.path, interface: BlueZ.agent, member: member, body: arguments)
        message.sender = sender
        return DBusMethodCall(message: message, path: BlueZAgent.path)
    }

    static let calls: [(String, [DBusValue])] = [
        ("RequestPasskey", [.objectPath(device)]),
        ("DisplayPasskey", [.objectPath(device), .uint32(123_456), .uint16(0)]),
        ("RequestConfirmation", [.objectPath(device), .uint32(123_456)]),
        ("RequestAuthorization", [.objectPath(device)]),
        ("AuthorizeService", [.objectPath(device), .string("0000180d-0000-1000-8000-00805f9b34fb")]),
    ]

    @Test("A caller that is not bluetoothd is rejected, and nothing reaches the user", arguments: [":1.42", nil])
    func othersAreRejected(sender: String?) async throws {
        let agent = CountingAgent()
        let authenticated = Mutex<[DeviceAddress]>([])
        let interface = BlueZAgent.interface(agent: agent, peer: { _ in Self.address },
                                             authenticated: { peer in authenticated.withLock { $0.append(peer) } },
                                             isBlueZ: { $0 == Self.bluetoothd })
        for (member, arguments) in Self.calls {
            let method = try #require(interface.methods.first { $0.name == member })
            await #expect(throws: DBusError.self, "\(member) from \(sender ?? "nobody")") {
                _ = try await method.handler(Self.call(member, from: sender, arguments))
            }
        }
        #expect(agent.asked.withLock { $0 } == 0)
        #expect(authenticated.withLock { $0 }.isEmpty)
    }

    @Test("bluetoothd's calls reach the user")
    func bluetoothdIsAnswered() async throws {
        let agent = CountingAgent()
        let authenticated = Mutex<[DeviceAddress]>([])
        let interface = BlueZAgent.interface(agent: agent, peer: { _ in Self.address },
                                             authenticated: { peer in authenticated.withLock { $0.append(peer) } },
                                             isBlueZ: { $0 == Self.bluetoothd })
        for (member, arguments) in Self.calls {
            let method = try #require(interface.methods.first { $0.name == member })
            _ = try await method.handler(Self.call(member, from: Self.bluetoothd, arguments))
        }
        #expect(agent.asked.withLock { $0 } == Self.calls.count)
        #expect(authenticated.withLock { $0 } == [Self.address, Self.address, Self.address], "passkey entered, displayed, compared")
    }
}
