import BluetoothHost
import Dispatch
import Foundation

/// How ``Bluejay/start(mode:)`` starts.
public enum StartMode: Sendable {
    /// Open a controller and start a new host with these options.
    case new(StartOptions)
    /// Take over a host that is already open (powered on or not) and, optionally, one of its
    /// connections, as if Bluejay had made it. Options other than the transport apply.
    /// ``Bluejay/stopAndExtractBluetoothState()`` hands them back.
    case use(host: LEHost, peripheral: Connection?, options: StartOptions = .default)
}

/// Bluejay's settings.
public struct StartOptions: Sendable {
    /// Where the controller is (``TransportProvider/environment`` by default).
    public var transport: TransportProvider
    /// Restoration of the previous process's connection; off by default.
    public var backgroundRestore: BackgroundRestoreMode
    /// Where every callback, observer and handler runs. The default is a serial queue of
    /// Bluejay's own (`bluejay.callbacks`), which works in a command-line program that never
    /// runs a main loop. Pass `.main` when the program runs `dispatchMain()` or a `RunLoop`.
    /// A concurrent queue is not allowed for: callbacks must run in order.
    public var callbackQueue: DispatchQueue
    /// The time limit of each read, write, discovery and listen set-up (the whole
    /// operation, discovery included). Bluejay on iOS has none; the default is 15 s.
    public var operationTimeout: Timeout
    /// Settings of the host Bluejay creates (not used by ``StartMode/use(host:peripheral:options:)``).
    public var hostConfiguration: HostConfiguration
    /// After a read or write refused with Insufficient Authentication or Insufficient
    /// Encryption, encrypt the link (with the bond's key, else by pairing) and try once more,
    /// as iOS does. On by default.
    public var raisesSecurityAutomatically = true
    /// Linux shows no Bluetooth alert; when `true`, an unusable controller is logged at `error` level.
    public var enableBluetoothAlert: Bool
    /// Whether the HCI traffic is recorded in a btsnoop file (``CaptureSetting/environment``,
    /// `$BLUEJAY_CAPTURE`, by default). Not used when ``hostConfiguration`` has a capture
    /// already, nor by ``StartMode/use(host:peripheral:options:)``; the host closes the file
    /// when Bluejay stops.
    public var capture: CaptureSetting

    public init(enableBluetoothAlert: Bool = false, backgroundRestore: BackgroundRestoreMode = .disable,
                transport: TransportProvider = .environment, callbackQueue: DispatchQueue? = nil,
                operationTimeout: Timeout = .seconds(15), hostConfiguration: HostConfiguration = HostConfiguration(),
                capture: CaptureSetting = .environment) {
        self.capture = capture
        self.enableBluetoothAlert = enableBluetoothAlert
        self.backgroundRestore = backgroundRestore
        self.transport = transport
        self.callbackQueue = callbackQueue ?? DispatchQueue(label: "bluejay.callbacks")
        self.operationTimeout = operationTimeout
        self.hostConfiguration = hostConfiguration
    }

    /// The environment's controller, a private serial callback queue, no restoration.
    public static var `default`: StartOptions { StartOptions() }

    /// Bluejay 0.7's name for ``default``.
    public static var bluejayDefault: StartOptions { StartOptions() }
}
