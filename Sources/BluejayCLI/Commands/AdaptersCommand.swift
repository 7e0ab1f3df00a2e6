import ArgumentParser
import BluetoothBlueZ
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import Foundation
import Logging
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
        (held by BlueZ, or by a program through its HCI user channel) and what to do next. Needs \
        no BlueZ and no privilege. With no adapter, or no Bluetooth in the kernel, it says so and \
        exits 0. When bluetoothd runs, each adapter also says whether BlueZ keeps it: \
        Bluejay runs on BlueZ with --hci bluez:hciN (or bluez, its default adapter). An adapter without a public address (00:00:00:00:00:00) gets a static random \
        address as identity: the one kept for it, else one made when it is first opened.

        With --hci TRANSPORT, opens that controller instead (it must be free: see above) and \
        reports what Bluejay does with it: its identity address and where it comes from, the \
        command family, buffers, list sizes, and what the controller lacks and the host does \
        without.
        """
    )

    @Flag(name: .long, help: "Print one JSON object per line instead of text.")
    var json = false

    @Option(name: .long, help: ArgumentHelp(
        "Open this controller and report what Bluejay does with it: tcp:HOST:PORT, unix:PATH, serial:DEVICE[@BAUD], hciN, virtual[:NAME].",
        valueName: "transport"))
    var hci: String?

    @Option(name: .long, help: ArgumentHelp(
        "Where bonds and generated static addresses are kept (default: $BLUEJAY_STATE_DIR/bonds, else $XDG_STATE_HOME/bluejay/bonds, else ~/.local/state/bluejay/bonds).",
        valueName: "directory"))
    var bondDirectory: String?

    @Flag(name: [.short, .long], help: "Log protocol details to stderr.")
    var verbose = false

    /// The directory of bonds and generated static addresses.
    var stateDirectory: String { bondDirectory ?? StateDirectory.bondDirectory }

    mutating func run() async throws {
        let output = Output(json: json)
        let blueZ: Result<[BlueZAdapterInfo], BlueZError> = await Self.blueZAdapters()
        if let hci, case let .bluez(name)? = try? TransportSpecification(parsing: hci) {
            try await runReportingErrors {
                let kept = try blueZ.get()
                guard let adapter = name.map({ name in kept.first { $0.name == name } }) ?? kept.first else {
                    throw BlueZError.adapterNotFound(name ?? "at all")
                }
                output.emit(Self.record(adapter), line: Self.describe(adapter))
            }
            return
        }
        if let hci {
            let (directory, verbose) = (stateDirectory, verbose)
            try await runReportingErrors { try await Self.report(hci, directory: directory, verbose: verbose, output: output) }
            return
        }
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
            if case let .success(kept) = blueZ, !kept.isEmpty {
                for adapter in kept { output.emit(Self.record(adapter), line: Self.describe(adapter)) }
                return
            }
            output.emit(["adapters": .int(0), "reason": .string("no adapter")],
                        line: "no adapters: the kernel has Bluetooth but sees no controller. Plug one in (see `dmesg | grep -i bluetooth`), "
                            + "or use --hci virtual, or a UART controller with --hci serial:/dev/ttyACM0.")
            return
        }
        let capability = HCIAdapters.hasNetworkAdminCapability()
        let daemon = HCIAdapters.isBluetoothDaemonRunning()
        let store = FileStaticAddressStore(directory: stateDirectory, logger: Logger(label: "bluejay"))
        let managed = HCIAdapters.managementIndexes()
        for adapter in adapters {
            // Up but no longer listed by the management interface: held through its user channel.
            let userChannel = adapter.isUp ? managed.map { !$0.contains(adapter.index) } : false
            let advice = AdapterAdvice(adapter: adapter, hasCapability: capability, daemonRunning: daemon, userChannelInUse: userChannel)
            // Without a public address Bluejay uses a static random address: the one kept for
            // this adapter, else one it makes when it first opens it.
            let kept = adapter.address == .zero ? try? await store.address(forAdapter: adapter.name) : nil
            var record: [String: JSONValue] = [
                "index": .int(Int(adapter.index)), "name": .string(adapter.name), "address": .string(adapter.address.description),
                "bus": .string(adapter.bus), "up": .bool(adapter.isUp), "user_channel": userChannel.map(JSONValue.bool) ?? .null,
                "ready": .bool(advice.isReady), "next": .array(advice.steps.map(JSONValue.string)),
            ]
            if adapter.address == .zero {
                record["identity"] = .optional(kept?.description)
                record["identityType"] = .string("random")
                record["identityGenerated"] = .bool(true)
            }
            var line = Self.describe(adapter, advice, userChannel: userChannel == true, keptStaticAddress: kept)
            switch blueZ {
            case let .success(kept):
                let held = kept.first { $0.name == adapter.name }
                record["bluez"] = .bool(held != nil)
                record["bluez_powered"] = held.map { .bool($0.isPowered) } ?? .null
                if let held {
                    line += "\n  → BlueZ keeps it (\(held.isPowered ? "powered" : "off")): use it through BlueZ with --hci bluez:\(adapter.name)"
                }
            case let .failure(error):
                record["bluez"] = .null
                record["bluez_error"] = .string("\(error)")
            }
            output.emit(record, line: line)
        }
        #else
        output.emit(["adapters": .int(0), "reason": .string("not Linux")],
                    line: "no adapters: listing adapters uses Linux HCI sockets. Use --hci tcp:HOST:PORT, serial:DEVICE or virtual.")
        #endif
    }

    /// The adapters BlueZ keeps, asked through org.bluez on the system bus (bounded: a bus
    /// that does not answer counts as none).
    static func blueZAdapters() async -> Result<[BlueZAdapterInfo], BlueZError> {
        let task = Task { () -> Result<[BlueZAdapterInfo], BlueZError> in
            do throws(BlueZError) { return .success(try await BlueZCentral.adapters()) } catch { return .failure(error) }
        }
        let timer = Task {
            try await Task.sleep(for: .seconds(3))
            task.cancel()
        }
        defer { timer.cancel() }
        return await task.value
    }

    static func record(_ adapter: BlueZAdapterInfo) -> [String: JSONValue] {
        ["name": .string(adapter.name), "address": .optional(adapter.address?.description), "bluez": .bool(true),
         "bluez_powered": .bool(adapter.isPowered), "next": .array([.string("use it through BlueZ with --hci bluez:\(adapter.name)")])]
    }

    static func describe(_ adapter: BlueZAdapterInfo) -> String {
        "\(adapter.name)  \(adapter.address?.description ?? "?")  kept by BlueZ (\(adapter.isPowered ? "powered" : "off"))\n"
            + "  → use it through BlueZ with --hci bluez:\(adapter.name)"
    }

    static func describe(_ adapter: HCIDeviceInfo, _ advice: AdapterAdvice, userChannel: Bool = false,
                         keptStaticAddress: BluetoothAddress? = nil) -> String {
        let state = !adapter.isUp ? "down" : userChannel ? "up (its HCI user channel is in use)" : "up (held by BlueZ)"
        var line = "\(adapter.name)  \(adapter.address)  \(adapter.bus)  \(state)"
        if adapter.address == .zero {
            line += keptStaticAddress.map { "  no public address: identity \($0) (random static, generated earlier)" }
                ?? "  no public address: Bluejay will use a static random address"
        }
        return line + "\n" + advice.steps.map { "  → \($0)" }.joined(separator: "\n")
    }

    /// Opens the controller, powers it on (HCI Reset, reads, the random address of a static
    /// identity) and reports what Bluejay does with it, then shuts the host down.
    static func report(_ transportText: String, directory: String, verbose: Bool, output: Output) async throws {
        HostSession.bootstrapLogging(verbose: verbose)
        let logger = Logger(label: "bluejay")
        var configuration = HostConfiguration()
        configuration.bondStore = FileBondStore(directory: directory, logger: logger)
        let host = LEHost(transport: try TransportOpener.open(transportText), configuration: configuration, logger: logger)
        let info: ControllerInfo
        let identity: LocalIdentity?
        do {
            info = try await host.powerOn()
            identity = await host.identity
        } catch {
            await host.shutdown()
            throw error
        }
        await host.shutdown()
        output.emit(record(transport: transportText, info: info, identity: identity), line: describe(transport: transportText, info: info, identity: identity))
    }

    static func record(transport: String, info: ControllerInfo, identity: LocalIdentity?) -> [String: JSONValue] {
        [
            "transport": .string(transport),
            "publicAddress": info.hasPublicAddress ? .string(info.address.description) : .null,
            "identity": .optional(identity?.address.address.description),
            "identityType": .optional(identity.map { "\($0.address.type.base)" }),
            "identitySource": .optional(identity.map { "\($0.source)" }),
            "identityGenerated": .bool(identity?.isGenerated == true),
            "hciVersion": .int(Int(info.version.hciVersion)),
            "company": .int(Int(info.version.companyIdentifier)),
            "commandFamily": .string(info.commandFamily == .extended ? "extended" : "legacy"),
            "aclDataLength": .int(info.aclDataLength),
            "aclBuffers": .int(info.aclBufferCount),
            "sharedBuffers": .bool(info.sharesACLBuffers),
            "filterAcceptListSize": info.filterAcceptListSize.map(JSONValue.int) ?? .null,
            "resolvingListSize": info.resolvingListSize.map(JSONValue.int) ?? .null,
            "adaptations": .array(info.adaptations.map { .string("\($0)") }),
        ]
    }

    static func describe(transport: String, info: ControllerInfo, identity: LocalIdentity?) -> String {
        let address = info.hasPublicAddress ? "public address \(info.address)" : "no public address"
        var lines = ["\(transport)  \(address)  identity \(identity.map { "\($0)" } ?? "unknown")"]
        lines.append("  HCI version \(Hex.format(info.version.hciVersion)), company \(Hex.format(info.version.companyIdentifier)); "
            + "\(info.commandFamily); LE ACL \(info.aclBufferCount) x \(info.aclDataLength) bytes"
            + (info.filterAcceptListSize.map { "; filter accept list \($0)" } ?? "") + (info.resolvingListSize.map { ", resolving list \($0)" } ?? ""))
        lines += info.adaptations.map { "  → \($0)" }
        return lines.joined(separator: "\n")
    }
}
