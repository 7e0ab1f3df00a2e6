import BluetoothCore
import BluetoothHost
import Foundation

/// Answers pairing questions on the terminal: passkeys are shown on stderr, typed at a prompt
/// (or taken from `--passkey`), numeric comparisons confirmed with y/n (or `--yes`).
struct TerminalPairingAgent: PairingAgent {
    let passkey: UInt32?
    let alwaysConfirm: Bool
    /// `--replace-bond`: allow a pairing weaker than the stored bond.
    var allowsReplacement = false

    func display(passkey: UInt32, for peer: DeviceAddress) async {
        Output.error("Passkey for \(peer): \(PairingPrompt.sixDigits(passkey)) (type it on the device)")
    }

    func passkey(for peer: DeviceAddress) async -> UInt32? {
        if let passkey { return passkey }
        guard isatty(STDIN_FILENO) == 1 else {
            Output.error("\(peer) asks for a passkey: pass --passkey N (stdin is not a terminal)")
            return nil
        }
        Output.error("Passkey shown on \(peer): ", terminator: "")
        guard let line = readLine(), let value = UInt32(line.trimmingCharacters(in: .whitespaces)), value <= 999_999 else {
            Output.error("not a six-digit passkey: pairing cancelled")
            return nil
        }
        return value
    }

    func confirm(number: UInt32, for peer: DeviceAddress) async -> Bool {
        if alwaysConfirm {
            Output.error("Confirming \(PairingPrompt.sixDigits(number)) with \(peer) (--yes)")
            return true
        }
        guard isatty(STDIN_FILENO) == 1 else {
            Output.error("\(peer) shows \(PairingPrompt.sixDigits(number)): pass --yes to confirm (stdin is not a terminal)")
            return false
        }
        Output.error("Does \(peer) show \(PairingPrompt.sixDigits(number))? [y/N] ", terminator: "")
        return readLine()?.lowercased().hasPrefix("y") == true
    }

    /// "Pair again?": never with --yes alone (anybody can claim a bonded identity); with
    /// --replace-bond, or asked on a terminal.
    func shouldReplaceBond(_ replacement: BondReplacement, for peer: DeviceAddress) async -> Bool {
        if allowsReplacement {
            Output.error("Replacing: \(replacement) (--replace-bond)")
            return true
        }
        guard isatty(STDIN_FILENO) == 1 else {
            Output.error("Refused: \(replacement). Pass --replace-bond to allow it, or remove the bond with `bluejay bonds --remove`.")
            return false
        }
        Output.error("\(replacement). Pair again anyway? [y/N] ", terminator: "")
        return readLine()?.lowercased().hasPrefix("y") == true
    }

    func bondReplaced(_ replacement: BondReplacement, for peer: DeviceAddress) async {
        Output.error("The bond with \(replacement.identity) was replaced: \(replacement.bonded) → \(replacement.proposed)")
    }
}
