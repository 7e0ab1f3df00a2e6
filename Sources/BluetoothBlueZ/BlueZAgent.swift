import BluetoothCore
import BluetoothHost
import DBus
import Logging

/// Our ``BluetoothHost/PairingAgent`` as BlueZ's `org.bluez.Agent1` (doc/agent-api.txt):
/// exported on the system bus and registered with `AgentManager1` as the default agent, so
/// bluetoothd asks it for passkeys, comparisons and consent, whoever started the pairing.
///
/// | Agent1 | PairingAgent |
/// | --- | --- |
/// | `RequestPasskey` | ``BluetoothHost/PairingAgent/passkey(for:)`` (`nil`: Rejected) |
/// | `DisplayPasskey` | ``BluetoothHost/PairingAgent/display(passkey:for:)`` (once per passkey, not per key press) |
/// | `RequestConfirmation` | ``BluetoothHost/PairingAgent/confirm(number:for:)`` |
/// | `RequestAuthorization`, `AuthorizeService` | ``BluetoothHost/PairingAgent/shouldAcceptPairing(with:)`` |
/// | `RequestPinCode`, `DisplayPinCode` | BR/EDR legacy PINs: Rejected (Bluejay is LE only) |
final class BlueZAgent: Sendable {
    static let path = DBusObjectPath(uncheckedPath: "/org/bluejay/agent")
    let bus: DBusConnection
    let logger: Logger

    init(bus: DBusConnection, logger: Logger) {
        self.bus = bus
        self.logger = logger
    }

    static func rejected(_ why: String) -> DBusError {
        .errorReply(name: "org.bluez.Error.Rejected", message: why)
    }

    /// The interface, answering from `agent`; `peer` finds a device's address in BlueZ's objects;
    /// `authenticated` hears of each pairing the user took part in (a passkey or a comparison:
    /// MITM protection, which BlueZ does not report otherwise); `isBlueZ` tells whether a
    /// caller's unique name is bluetoothd's. Only bluetoothd is answered: another client of the
    /// bus that may call us (the bus's policy decides who may) could otherwise put prompts of its
    /// own before the user, or have a device counted as authenticated.
    static func interface(agent: any PairingAgent, peer: @escaping @Sendable (DBusObjectPath) -> DeviceAddress?,
                          authenticated: @escaping @Sendable (DeviceAddress) -> Void,
                          isBlueZ: @escaping @Sendable (String?) async -> Bool) -> DBusInterface {
        @Sendable func device(_ call: DBusMethodCall) async throws -> DeviceAddress {
            guard await isBlueZ(call.sender) else { throw rejected("only bluetoothd asks this agent") }
            guard let path = call.arguments.first?.objectPathValue, let address = peer(path) else {
                throw rejected("unknown device")
            }
            return address
        }
        return DBusInterface(BlueZ.agent, methods: [
            DBusMethod("Release") { _ in [] },
            DBusMethod("Cancel") { _ in [] },
            DBusMethod("RequestPinCode", inputs: [.init("device", .objectPath)], outputs: [.init("pincode", .string)]) { _ in
                throw rejected("PIN codes are BR/EDR legacy pairing; Bluejay pairs LE only")
            },
            DBusMethod("DisplayPinCode", inputs: [.init("device", .objectPath), .init("pincode", .string)]) { _ in
                throw rejected("PIN codes are BR/EDR legacy pairing; Bluejay pairs LE only")
            },
            DBusMethod("RequestPasskey", inputs: [.init("device", .objectPath)], outputs: [.init("passkey", .uint32)]) { call in
                let peer = try await device(call)
                guard let passkey = await agent.passkey(for: peer), passkey <= 999_999 else { throw rejected("no passkey was given") }
                authenticated(peer)
                return [.uint32(passkey)]
            },
            DBusMethod("DisplayPasskey", inputs: [.init("device", .objectPath), .init("passkey", .uint32), .init("entered", .uint16)]) { call in
                let peer = try await device(call)
                // BlueZ calls again as the peer types each digit; show the passkey once.
                if call.arguments.count >= 3, call.arguments[2].uint16Value == 0, let passkey = call.arguments[1].uint32Value {
                    authenticated(peer)
                    await agent.display(passkey: passkey, for: peer)
                }
                return []
            },
            DBusMethod("RequestConfirmation", inputs: [.init("device", .objectPath), .init("passkey", .uint32)]) { call in
                let peer = try await device(call)
                guard let number = call.arguments[1].uint32Value, await agent.confirm(number: number, for: peer) else {
                    throw rejected("the numbers were not confirmed")
                }
                authenticated(peer)
                return []
            },
            DBusMethod("RequestAuthorization", inputs: [.init("device", .objectPath)]) { call in
                guard await agent.shouldAcceptPairing(with: try await device(call)) else { throw rejected("pairing refused") }
                return []
            },
            DBusMethod("AuthorizeService", inputs: [.init("device", .objectPath), .init("uuid", .string)]) { call in
                guard await agent.shouldAcceptPairing(with: try await device(call)) else { throw rejected("service refused") }
                return []
            },
        ])
    }

    func unregister() async {
        _ = try? await bus.call(destination: BlueZ.service, path: BlueZ.root, interface: BlueZ.agentManager, member: "UnregisterAgent",
                                arguments: [.objectPath(Self.path)], timeout: .seconds(2))
        try? bus.unexport(Self.path)
    }
}

extension BlueZCentral {
    /// Exports `agent` as Agent1 and registers it as BlueZ's default agent.
    func registerAgent(_ agent: any PairingAgent) async throws {
        let bus = try requireBus()
        let old = state.withLock { state -> BlueZAgent? in
            defer { state.agentExport = nil }
            return state.agentExport
        }
        if old != nil {
            await old?.unregister()
        }
        let interface = BlueZAgent.interface(agent: agent, peer: { [weak self] path in
            self?.tree().properties(path, BlueZ.device).flatMap(BlueZObjectTree.address(of:))
        }, authenticated: { [weak self] peer in
            _ = self?.state.withLock { $0.authenticatedPeers.insert(peer.address) }
        }, isBlueZ: { [weak bus] sender in
            guard let sender, let bus, let owner = (try? await bus.nameOwner(BlueZ.service)) ?? nil else { return false }
            return owner == sender
        })
        do {
            try await bus.export([interface], at: BlueZAgent.path)
        } catch {
            throw BlueZError.from(error, operation: "exporting the pairing agent")
        }
        let export = BlueZAgent(bus: bus, logger: logger)
        state.withLock { $0.agentExport = export }
        try await call(BlueZ.root, BlueZ.agentManager, "RegisterAgent", [.objectPath(BlueZAgent.path), .string(ioCapability.description)],
                       operation: "registering the pairing agent")
        try await call(BlueZ.root, BlueZ.agentManager, "RequestDefaultAgent", [.objectPath(BlueZAgent.path)],
                       operation: "making the pairing agent BlueZ's default")
        logger.info("pairing agent registered with BlueZ (\(ioCapability))")
    }
}
