import Foundation

/// What to do next with an adapter, for `bluejay adapters`: whether Bluejay can open its user
/// channel now, and the commands that free it or grant the capability when not.
public struct AdapterAdvice: Sendable, Equatable {
    /// The adapter can be opened as `hciN` right now.
    public var isReady: Bool
    /// One sentence each, in the order to do them.
    public var steps: [String]

    public init(isReady: Bool, steps: [String]) {
        self.isReady = isReady
        self.steps = steps
    }

    /// - Parameters:
    ///   - adapter: the adapter as the kernel reports it.
    ///   - hasCapability: the process has `CAP_NET_ADMIN` (`nil`: unknown).
    ///   - daemonRunning: BlueZ's `bluetoothd` runs (it powers adapters back on).
    ///   - userChannelInUse: a program holds the adapter through its HCI user channel, rather
    ///     than BlueZ (`nil`: unknown; see ``HCIAdapters/managementIndexes()``).
    ///   - executable: how to name this program in a `setcap` command.
    public init(adapter: HCIDeviceInfo, hasCapability: Bool?, daemonRunning: Bool, userChannelInUse: Bool? = nil,
                executable: String = "$(which bluejay)") {
        var steps: [String] = []
        if adapter.isUp, userChannelInUse == true {
            steps.append("another program holds it through its HCI user channel (a bluejay still running?): end that program, then try again")
        } else if adapter.isUp {
            steps.append("BlueZ holds it (up): power it off with `sudo btmgmt --index \(adapter.index) power off` "
                + "(or `bluetoothctl power off`)")
            if daemonRunning {
                steps.append("bluetoothd runs and powers it on again when Bluejay lets it go: stop it with `sudo systemctl stop bluetooth`")
            }
        }
        if hasCapability == false {
            steps.append("this process lacks CAP_NET_ADMIN: run as root or `sudo setcap cap_net_admin+ep \(executable)`")
        }
        isReady = !adapter.isUp && hasCapability != false
        if isReady { steps.append("ready: use --hci \(adapter.name)") }
        self.steps = steps
    }

    /// Whether the `CapEff:` line of a /proc/PID/status text has `CAP_NET_ADMIN` (bit 12).
    public static func hasNetworkAdmin(procStatus: String) -> Bool? {
        for line in procStatus.split(separator: "\n") where line.hasPrefix("CapEff:") {
            guard let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16) else { return nil }
            return mask & 1 << 12 != 0
        }
        return nil
    }
}
