import ArgumentParser
import BluetoothTransport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `bluejay adapters`: the machine's HCI adapters (the kernel's HCI socket ioctls, no BlueZ),
/// whether each can be opened now, and what to do when it cannot.
struct AdaptersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List this machine's Bluetooth adapters and whether Bluejay can open them.",
        discussion: """
        For each adapter: its index (open it with --hci hciN), address, bus, whether it is up \
        (held by BlueZ, or by a program through its HCI user channel) and what to do next. Needs no BlueZ and no privilege. With no adapter, \
        or no Bluetooth in the kernel, it says so and exits 0.
        """
    )

    @Flag(name: .long, help: "Print one JSON object per line instead of text.")
    var json = false

    mutating func run() async throws {
        let output = Output(json: json)
        #if canImport(Glibc)
        let adapters: [HCIDeviceInfo]
        do {
            adapters = try HCIAdapters.list()
        } catch let .openFailed(_, code, _) where code == EAFNOSUPPORT {
            output.emit(["adapters": .int(0), "reason": .string("no Bluetooth support in this kernel")],
                        line: "no adapters: this kernel has no Bluetooth support (AF_BLUETOOTH). Try `sudo modprobe bluetooth`; "
                            + "a container or VM usually cannot see the host's adapters. Without hardware, use --hci virtual.")
            return
        } catch {
            Output.error("bluejay: \(error)")
            throw ExitCode(CLIError.transport(error).exitCode)
        }
        guard !adapters.isEmpty else {
            output.emit(["adapters": .int(0), "reason": .string("no adapter")],
                        line: "no adapters: the kernel has Bluetooth but sees no controller. Plug one in (see `dmesg | grep -i bluetooth`), "
                            + "or use --hci virtual, or a UART controller with --hci serial:/dev/ttyACM0.")
            return
        }
        let capability = HCIAdapters.hasNetworkAdminCapability()
        let daemon = HCIAdapters.isBluetoothDaemonRunning()
        let managed = HCIAdapters.managementIndexes()
        for adapter in adapters {
            // Up but no longer listed by the management interface: held through its user channel.
            let userChannel = adapter.isUp ? managed.map { !$0.contains(adapter.index) } : false
            let advice = AdapterAdvice(adapter: adapter, hasCapability: capability, daemonRunning: daemon, userChannelInUse: userChannel)
            output.emit([
                "index": .int(Int(adapter.index)), "name": .string(adapter.name), "address": .string(adapter.address.description),
                "bus": .string(adapter.bus), "up": .bool(adapter.isUp), "user_channel": userChannel.map(JSONValue.bool) ?? .null,
                "ready": .bool(advice.isReady), "next": .array(advice.steps.map(JSONValue.string)),
            ], line: Self.describe(adapter, advice, userChannel: userChannel == true))
        }
        #else
        output.emit(["adapters": .int(0), "reason": .string("not Linux")],
                    line: "no adapters: listing adapters uses Linux HCI sockets. Use --hci tcp:HOST:PORT, serial:DEVICE or virtual.")
        #endif
    }

    static func describe(_ adapter: HCIDeviceInfo, _ advice: AdapterAdvice, userChannel: Bool = false) -> String {
        let state = !adapter.isUp ? "down" : userChannel ? "up (its HCI user channel is in use)" : "up (held by BlueZ)"
        return "\(adapter.name)  \(adapter.address)  \(adapter.bus)  \(state)\n" + advice.steps.map { "  → \($0)" }.joined(separator: "\n")
    }
}
