import BluetoothTransport
import Foundation

/// Whether Bluejay records the HCI traffic of the host it starts in a btsnoop file (for
/// Wireshark or `tshark -r FILE`); see ``StartOptions/capture``.
public enum CaptureSetting: Sendable, Equatable {
    /// `$BLUEJAY_CAPTURE` when set (a file path), else nothing. The default. An existing file
    /// is refused unless `$BLUEJAY_CAPTURE_MODE` is `append` or `replace`.
    case environment
    /// Record nothing.
    case off
    /// Record into this file; `mode` says what happens when it exists (refused by default).
    case file(String, mode: HCICapture.FileMode = .createNew)

    /// The environment variable naming the capture file.
    public static let environmentVariable = "BLUEJAY_CAPTURE"
    /// The environment variable that allows an existing file: `append` or `replace`.
    public static let modeEnvironmentVariable = "BLUEJAY_CAPTURE_MODE"

    /// Opens the capture this setting asks for, or `nil`.
    func open(environment: [String: String] = ProcessInfo.processInfo.environment) throws(BluejayError) -> HCICapture? {
        let path: String
        var mode = HCICapture.FileMode.createNew
        switch self {
        case .off:
            return nil
        case let .file(file, fileMode):
            path = file
            mode = fileMode
        case .environment:
            guard let value = environment[Self.environmentVariable], !value.isEmpty else { return nil }
            path = value
            switch environment[Self.modeEnvironmentVariable] {
            case "append": mode = .append
            case "replace": mode = .replace
            case nil, "": break
            case let other?:
                throw .bluetoothUnavailable("\(Self.modeEnvironmentVariable)=\(other) is neither append nor replace")
            }
        }
        do {
            return try HCICapture(path: path, mode: mode)
        } catch {
            throw .bluetoothUnavailable("\(error)")
        }
    }
}
