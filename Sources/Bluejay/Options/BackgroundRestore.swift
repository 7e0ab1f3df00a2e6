import Foundation

/// Whether Bluejay restores the previous process's connection and listens.
public enum BackgroundRestoreMode: Sendable {
    /// No restoration (the default): nothing is persisted.
    case disable
    /// Persist the connected peripheral and its listens, and restore them at the next start.
    case enable(BackgroundRestoreConfig)
}

/// Restoration on Linux. iOS keeps Bluetooth connections alive for an app it terminated
/// and hands them back at relaunch; on Linux the process owns its connections, so Bluejay
/// does the equivalent itself:
///
/// - while running, it writes the connected peripheral and its active listens to
///   `<directory>/<restoreIdentifier>.json`; an expected disconnection clears the file;
/// - when a process starts with the same restore identifier and finds a peripheral there
///   (the previous process ended without disconnecting: killed, crashed, rebooted),
///   ``Bluejay/start(mode:)`` reconnects to it, enables its listens again and calls the
///   ``BackgroundRestorer``; notifications on those listens go to the ``ListenRestorer``
///   until the app installs callbacks with ``Bluejay/listen(to:multipleListenOption:completion:)``.
public struct BackgroundRestoreConfig: Sendable {
    public var restoreIdentifier: String
    public var backgroundRestorer: any BackgroundRestorer
    /// Without one, restored listens are not enabled again.
    public var listenRestorer: (any ListenRestorer)?
    /// Where the state file lives: by default `$BLUEJAY_STATE_DIR`, else
    /// `$XDG_STATE_HOME/bluejay`, else `~/.local/state/bluejay`.
    public var directory: URL
    /// How long to try reconnecting to the restored peripheral.
    public var reconnectTimeout: Timeout

    public init(restoreIdentifier: String, backgroundRestorer: any BackgroundRestorer, listenRestorer: (any ListenRestorer)? = nil,
                directory: URL? = nil, reconnectTimeout: Timeout = .seconds(30)) {
        self.restoreIdentifier = restoreIdentifier
        self.backgroundRestorer = backgroundRestorer
        self.listenRestorer = listenRestorer
        self.directory = directory ?? Self.defaultDirectory()
        self.reconnectTimeout = reconnectTimeout
    }

    /// `$BLUEJAY_STATE_DIR`, else `$XDG_STATE_HOME/bluejay`, else `~/.local/state/bluejay`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let directory = environment["BLUEJAY_STATE_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory, isDirectory: true)
        }
        if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            return URL(fileURLWithPath: state, isDirectory: true).appendingPathComponent("bluejay", isDirectory: true)
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/state/bluejay", isDirectory: true)
    }
}
