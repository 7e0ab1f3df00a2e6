@testable import BluetoothBlueZ
import BluetoothHost
import DBus
import Testing

/// BlueZ's and the bus's error replies, as typed errors that say what to do.
@Suite("BlueZ: errors")
struct BlueZErrorTests {
    static func reply(_ name: String, _ message: String) -> DBusError { .errorReply(name: DBusErrorName(name), message: message) }

    @Test("GATT refusals are the peer's ATT errors (so a read refused for lack of pairing raises security)", arguments: [
        ("org.bluez.Error.NotPermitted", "Read not permitted", ATTErrorCode.readNotPermitted),
        ("org.bluez.Error.NotPermitted", "Write not permitted", .writeNotPermitted),
        ("org.bluez.Error.NotPermitted", "Not paired", .insufficientAuthentication),
        ("org.bluez.Error.NotAuthorized", "Not Authorized", .insufficientAuthorization),
        ("org.bluez.Error.InvalidArguments", "Invalid offset", .invalidOffset),
        ("org.bluez.Error.InvalidArguments", "Invalid Length", .invalidAttributeValueLength),
        ("org.bluez.Error.Failed", "Operation failed with ATT error: 0x80", ATTErrorCode(rawValue: 0x80)),
        ("org.bluez.Error", "Operation failed with ATT error: 0x0e", .unlikelyError),
    ])
    func attErrors(name: String, message: String, code: ATTErrorCode) {
        let error = BlueZError.from(Self.reply(name, message), operation: "reading 2A37")
        guard case let HostError.att(att) = error else {
            Issue.record("\(name) \(message) should be an ATT error, got \(error)")
            return
        }
        #expect(att.code == code)
    }

    @Test("A policy refusal names the policy file and what to allow")
    func accessDenied() {
        let error = BlueZError.from(Self.reply("org.freedesktop.DBus.Error.AccessDenied", "Rejected send message"), operation: "registering the agent")
        #expect(error as? BlueZError == .accessDenied(operation: "registering the agent", message: "Rejected send message"))
        let text = "\(error)"
        for advice in ["/etc/dbus-1/system.d/bluetooth.conf", "send_destination=\"org.bluez\"", "group=\"bluetooth\"", "root"] {
            #expect(text.contains(advice), "\(text)")
        }
    }

    @Test("bluetoothd missing or gone: says so and how to start it")
    func daemonMissing() {
        // Without bluetoothd the bus tries to start it (activation): where that fails, the bus
        // answers Spawn.* (the guest: "Launch helper exited with unknown return code 1"), or
        // systemd's errors when the unit is missing or masked.
        for error in [BlueZError.from(Self.reply("org.freedesktop.DBus.Error.ServiceUnknown", "The name org.bluez was not provided"), operation: "x"),
                      BlueZError.from(Self.reply("org.freedesktop.DBus.Error.Spawn.ChildExited", "Launch helper exited with unknown return code 1"), operation: "x"),
                      BlueZError.from(Self.reply("org.freedesktop.systemd1.NoSuchUnit", "Unit dbus-org.bluez.service not found."), operation: "x"),
                      BlueZError.from(Self.reply("org.freedesktop.systemd1.UnitMasked", "Unit bluetooth.service is masked."), operation: "x"),
                      BlueZError.from(.connectionClosed(reason: "EOF"), operation: "x")] {
            guard case BlueZError.daemonUnavailable = error else {
                Issue.record("expected daemonUnavailable, got \(error)")
                continue
            }
            #expect("\(error)".contains("systemctl start bluetooth"))
        }
        let noBus = BlueZError.from(.connectFailed(address: "unix:path=/run/dbus/system_bus_socket", errno: 2, hint: ""), operation: "x")
        guard case BlueZError.busUnavailable = noBus else {
            Issue.record("expected busUnavailable, got \(noBus)")
            return
        }
    }

    @Test("Other BlueZ refusals keep BlueZ's name and message and add advice; timeouts and cancellation are the host's")
    func refusals() {
        let busy = BlueZError.from(Self.reply("org.bluez.Error.InProgress", "Operation already in progress"), operation: "starting discovery")
        #expect("\(busy)" == "starting discovery failed: BlueZ answered org.bluez.Error.InProgress: Operation already in progress. "
            + "The same operation is already running on that adapter or device; wait for it or cancel it")
        let notReady = BlueZError.from(Self.reply("org.bluez.Error.NotReady", "Resource Not Ready"), operation: "scanning")
        #expect("\(notReady)".contains("bluetoothctl power on"))
        #expect(BlueZError.from(.cancelled, operation: "x") as? HostError == .cancelled)
        guard case HostError.procedureTimeout = BlueZError.from(.timedOut("Connect", after: .seconds(25)), operation: "connecting") else {
            Issue.record("a timeout should be the host's procedureTimeout")
            return
        }
    }

    @Test("Why a link ended: BlueZ's reasons in HCI terms; a connection failure's message")
    func reasons() {
        #expect(BlueZDisconnection.status(forReason: "org.bluez.Reason.Remote") == .remoteUserTerminatedConnection)
        #expect(BlueZDisconnection.status(forReason: "org.bluez.Reason.Timeout") == .connectionTimeout)
        #expect(BlueZDisconnection.status(forReason: "org.bluez.Reason.Local") == .connectionTerminatedByLocalHost)
        #expect(BlueZDisconnection.status(forReason: "org.bluez.Reason.Unknown") == nil)
        #expect(BlueZDisconnection.status(forConnectFailure: "le-connection-abort-by-local") == .connectionFailedToBeEstablished)
    }
}
