import ArgumentParser
import BluetoothCore
import Foundation

/// Options every command takes.
struct CommonOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The controller: tcp:HOST:PORT, unix:PATH, serial:DEVICE[@BAUD], hciN, virtual[:NAME] (default: $BLUEJAY_HCI).",
        valueName: "transport"))
    var hci: String?

    @Flag(name: .long, help: "Print one JSON object per line instead of a table.")
    var json = false

    @Flag(name: [.short, .long], help: "Log protocol details to stderr.")
    var verbose = false

    @OptionGroup var capture: CaptureOptions

    /// The transport to open: the option, else the environment.
    func transport() throws -> String {
        if let hci { return hci }
        if let fromEnvironment = ProcessInfo.processInfo.environment["BLUEJAY_HCI"], !fromEnvironment.isEmpty {
            return fromEnvironment
        }
        throw CLIError.usage("no controller given: pass --hci TRANSPORT or set BLUEJAY_HCI")
    }
}

/// Options of commands that connect to one peripheral.
struct PeripheralOptions: ParsableArguments {
    @Option(name: .long, help: "The peripheral's address, e.g. C0:FF:EE:00:11:22.")
    var address: String

    @Flag(name: .long, help: "The address is a random one (most peripherals use random addresses).")
    var random = false

    @Option(name: .long, help: "Seconds to wait for the peripheral to accept the connection (0 to 86400).")
    var connectTimeout = Seconds(whole: 10)

    func deviceAddress() throws -> DeviceAddress {
        guard let address = BluetoothAddress(address) else {
            throw CLIError.usage("\"\(address)\" is not a Bluetooth address (expected six hex bytes like C0:FF:EE:00:11:22)")
        }
        return DeviceAddress(address, type: random ? .random : .public)
    }
}

/// Parses UUID arguments in the short (`180D`) or full 128-bit form.
func parseUUID(_ text: String, what: String) throws -> BluetoothUUID {
    guard let uuid = BluetoothUUID(text) else {
        throw CLIError.usage("\"\(text)\" is not a \(what) UUID (use 180D or 0000180D-0000-1000-8000-00805F9B34FB)")
    }
    return uuid
}
