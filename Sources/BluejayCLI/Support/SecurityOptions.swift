import ArgumentParser
import BluetoothCore
import BluetoothHost
import Foundation
import Logging

/// How the CLI pairs: its IO capability, a passkey for scripts, and where bonds are kept.
struct SecurityOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "What this terminal can do when pairing: none (Just Works), display, keyboard, yesno, keyboard-display.",
        valueName: "capability"))
    var io: IOCapabilityArgument = .none

    @Option(name: .long, help: "The passkey to type when the peer displays one (0 to 999999), instead of a prompt.")
    var passkey: UInt32?

    @Flag(name: .long, help: "Answer yes to a numeric comparison without asking.")
    var yes = false

    @Flag(name: .long, help: "Require MITM protection: the MITM flag in the pairing's AuthReq, Just Works refused, an unauthenticated link an error.")
    var mitm = false

    @Flag(name: .long, help: "Allow a pairing weaker than the stored bond to replace it (\"pair again\"); refused by default.")
    var replaceBond = false

    @Option(name: .long, help: ArgumentHelp(
        "Where bonds are kept (default: $BLUEJAY_STATE_DIR/bonds, else $XDG_STATE_HOME/bluejay/bonds, else ~/.local/state/bluejay/bonds).",
        valueName: "directory"))
    var bondDirectory: String?

    func validate() throws {
        if let passkey, passkey > 999_999 { throw ValidationError("--passkey must be 0 to 999999 (six digits)") }
    }

    var settings: SecurityManagerSettings {
        SecurityManagerSettings(ioCapability: io.capability, requiresMITM: mitm)
    }

    /// The bond directory: the option, else the state directory's `bonds`.
    var directory: String { bondDirectory ?? StateDirectory.bondDirectory }

    /// The host configuration with these settings, a file bond store and this machine's IRK.
    func configuration(logger: Logger) -> HostConfiguration {
        var configuration = HostConfiguration()
        configuration.security = settings
        configuration.bondStore = FileBondStore(directory: directory, logger: logger)
        configuration.identityResolvingKey = IdentityKeyFile(directory: directory).load(logger: logger)
        return configuration
    }
}

enum IOCapabilityArgument: String, ExpressibleByArgument, CaseIterable {
    case none, display, keyboard, yesno
    case keyboardDisplay = "keyboard-display"

    var capability: SMPIOCapability {
        switch self {
        case .none: return .noInputNoOutput
        case .display: return .displayOnly
        case .keyboard: return .keyboardOnly
        case .yesno: return .displayYesNo
        case .keyboardDisplay: return .keyboardDisplay
        }
    }
}

/// Where the CLI keeps state: `$BLUEJAY_STATE_DIR`, else `$XDG_STATE_HOME/bluejay`, else
/// `~/.local/state/bluejay`.
enum StateDirectory {
    static var path: String {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["BLUEJAY_STATE_DIR"], !explicit.isEmpty { return explicit }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/bluejay" }
        return NSHomeDirectory() + "/.local/state/bluejay"
    }

    /// Where bonds, the identity key and generated static addresses are kept: `<state>/bonds`.
    static var bondDirectory: String { path + "/bonds" }
}

/// This machine's Identity Resolving Key, kept beside the bonds (`identity-key`, 0600) so
/// that bonded peers recognise it across runs.
struct IdentityKeyFile {
    let directory: String
    var path: String { directory + "/identity-key" }

    func load(logger: Logger) -> UInt128 {
        if let text = try? String(contentsOfFile: path, encoding: .utf8),
           let key = UInt128(text.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16), key != 0 {
            return key
        }
        let key = UInt128.random(in: 1...UInt128.max)
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let text = Hex.digits(key, count: 32, uppercase: false) + "\n"
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw CocoaError(.fileWriteUnknown)
            }
        } catch {
            logger.warning("could not keep the identity key in \(path): \(error); bonded peers will not recognise this machine next time")
        }
        return key
    }
}
