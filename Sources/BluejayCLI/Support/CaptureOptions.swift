import ArgumentParser
import BluetoothTransport
import Foundation

/// `--capture FILE`: every command can record its HCI traffic in a btsnoop file (Wireshark,
/// `tshark -r FILE`). An existing file is refused unless `--capture-append` or
/// `--capture-overwrite` says what to do with it. The file is made `0600`, never written
/// through a symbolic link, and its keys are blanked unless `--capture-keys` keeps them.
struct CaptureOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "Record every HCI packet in a btsnoop file for Wireshark (default: $BLUEJAY_CAPTURE).", valueName: "file"))
    var capture: String?

    @Flag(name: .customLong("capture-append"), help: "Add to the capture file when it exists (it must be a btsnoop file).")
    var captureAppend = false

    @Flag(name: .customLong("capture-overwrite"), help: "Replace the capture file when it exists.")
    var captureOverwrite = false

    @Flag(name: .customLong("capture-keys"), help: ArgumentHelp(
        "Keep encryption keys (LTKs, IRKs, CSRKs, pairing values) in the capture, for Wireshark to decrypt the links; by default they are blanked.",
        discussion: "Whoever reads such a file gets the bonds' keys."))
    var captureKeys = false

    /// The file to record into: the option, else `$BLUEJAY_CAPTURE`, else none.
    var path: String? {
        if let capture { return capture }
        let fromEnvironment = ProcessInfo.processInfo.environment["BLUEJAY_CAPTURE"]
        return fromEnvironment?.isEmpty == false ? fromEnvironment : nil
    }

    func mode() throws -> HCICapture.FileMode {
        switch (captureAppend, captureOverwrite) {
        case (true, true): throw CLIError.usage("--capture-append and --capture-overwrite exclude each other")
        case (true, false): return .append
        case (false, true): return .replace
        case (false, false): return .createNew
        }
    }

    /// Opens the capture, or `nil` without `--capture`. `suffix` goes before the file's
    /// extension (`bluejay virtual`: one file per controller, `cap-1.btsnoop`).
    func open(suffix: String = "") throws -> HCICapture? {
        guard let path else {
            if captureAppend || captureOverwrite || captureKeys {
                throw CLIError.usage("--capture-append, --capture-overwrite and --capture-keys need --capture FILE")
            }
            return nil
        }
        let mode = try mode()
        do {
            return try HCICapture(path: Self.path(path, suffix: suffix), mode: mode, keys: captureKeys ? .kept : .blanked)
        } catch {
            throw CLIError.capture(error)
        }
    }

    /// `path` with `suffix` before its extension: `cap.btsnoop` and `-1` make `cap-1.btsnoop`.
    static func path(_ path: String, suffix: String) -> String {
        guard !suffix.isEmpty else { return path }
        let url = URL(fileURLWithPath: path)
        let name = url.lastPathComponent
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return path + suffix }
        let directory = String(path.dropLast(name.count))
        return directory + name[..<dot] + suffix + name[dot...]
    }
}
