import BluetoothTransport
import Foundation

/// Whether Bluejay records the HCI traffic of the host it starts in a btsnoop file (for
/// Wireshark or `tshark -r FILE`); see ``StartOptions/capture``. The file is `0600` and holds
/// every value read or written; its keys are blanked unless asked for (see
/// `HCICapture.KeyMaterial`).
public enum CaptureSetting: Sendable, Equatable {
    /// `$BLUEJAY_CAPTURE` when set (a file path), else nothing. The default. An existing file
    /// is refused unless `$BLUEJAY_CAPTURE_MODE` is `append` or `replace`; keys are kept only
    /// when `$BLUEJAY_CAPTURE_KEYS` is `keep`.
    case environment
    /// Record nothing.
    case off
    /// Record into this file; `mode` says what happens when it exists (refused by default),
    /// `keys` whether keys are blanked (the default) or kept for Wireshark's decryption.
    case file(String, mode: HCICapture.FileMode = .createNew, keys: HCICapture.KeyMaterial = .blanked)

    /// The environment variable naming the capture file.
    public static let environmentVariable = "BLUEJAY_CAPTURE"
    /// The environment variable that allows an existing file: `append` or `replace`.
    public static let modeEnvironmentVariable = "BLUEJAY_CAPTURE_MODE"
    /// The environment variable that keeps keys in the capture: `keep`.
    public static let keysEnvironmentVariable = "BLUEJAY_CAPTURE_KEYS"

    /// Opens the capture this setting asks for, or `nil`.
    func open(environment: [String: String] = ProcessInfo.processInfo.environment) throws(BluejayError) -> HCICapture? {
        let path: String
        var mode = HCICapture.FileMode.createNew
        var keys = HCICapture.KeyMaterial.blanked
        switch self {
        case .off:
            return nil
        case let .file(file, fileMode, fileKeys):
            path = file
            mode = fileMode
            keys = fileKeys
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
            switch environment[Self.keysEnvironmentVariable] {
            case "keep": keys = .kept
            case nil, "": break
            case let other?:
                throw .bluetoothUnavailable("\(Self.keysEnvironmentVariable)=\(other) is not keep")
            }
        }
        do {
            return try HCICapture(path: path, mode: mode, keys: keys)
        } catch {
            throw .bluetoothUnavailable("\(error)")
        }
    }
}
