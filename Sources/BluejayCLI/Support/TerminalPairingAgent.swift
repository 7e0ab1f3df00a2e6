import BluetoothCore
import BluetoothHost
import Foundation

/// Answers pairing questions on the terminal: passkeys are shown on stderr, typed at a prompt
/// (or taken from `--passkey`), numeric comparisons confirmed with y/n (or `--yes`).
struct TerminalPairingAgent: PairingAgent {
    let passkey: UInt32?
    let alwaysConfirm: Bool

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
}
