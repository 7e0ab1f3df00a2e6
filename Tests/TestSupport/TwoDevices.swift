import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothVirtual

/// The addresses of the test devices on a virtual link.
public enum TestAddresses {
    public static let central = BluetoothAddress("C0:00:00:00:00:01") ?? .zero
    public static let peripheral = BluetoothAddress("C0:00:00:00:00:02") ?? .zero
    public static let third = BluetoothAddress("C0:00:00:00:00:03") ?? .zero
}

/// Two of our hosts on one in-process virtual link, each on its own virtual controller: the
/// tests' one two-device helper, as Bumble's `TwoDevices`. Both hosts are full `LEHost`s, so
/// either can take either role (scan, advertise, connect, serve GATT, pair); ``connect(timeout:)``
/// has ``central`` connect to ``peripheral``'s advertisement. The options choose each side's
/// controller (features, buffers, data length), the hosts' clock, their security (settings,
/// bond store, pairing agent) and a ``FilteringTransport`` between a host and its controller.
///
/// ```swift
/// let devices = try await TwoDevices()
/// let (connection, incoming) = try await devices.connect()
/// // … the test …
/// await devices.shutdown()
/// ```
///
/// Not a `TwoDevices`: a host against a raw HCI peer (`HCITestHost`), two raw HCI hosts
/// (`ConnectedPair`), protocol state machines run in memory without hosts, and the Bluejay
/// app API's own fixtures (whose app owns its host).
public struct TwoDevices: Sendable {
    /// How one of the two devices is built.
    public struct Device: Sendable {
        public var name: String
        public var address: BluetoothAddress
        public var position: VirtualPosition
        /// The virtual controller's features, buffers, data length and variants.
        public var controller: VirtualController.Configuration
        /// The Security Manager's settings; `nil` keeps the shared configuration's.
        public var security: SecurityManagerSettings?
        /// Where this host keeps its bonds; `nil` keeps the shared configuration's (a new
        /// in-memory store per host).
        public var bondStore: (any BondStore)?
        /// Answers this host's pairing prompts.
        public var pairingAgent: (any PairingAgent)?
        /// Puts a ``FilteringTransport`` between the host and its controller.
        public var isFiltered: Bool
        /// Changes to the shared host configuration for this host only.
        public var configure: @Sendable (inout HostConfiguration) -> Void

        public init(name: String, address: BluetoothAddress, position: VirtualPosition = .origin,
                    controller: VirtualController.Configuration = .init(), security: SecurityManagerSettings? = nil,
                    bondStore: (any BondStore)? = nil, pairingAgent: (any PairingAgent)? = nil, isFiltered: Bool = false,
                    configure: @escaping @Sendable (inout HostConfiguration) -> Void = { _ in }) {
            self.name = name
            self.address = address
            self.position = position
            self.controller = controller
            self.security = security
            self.bondStore = bondStore
            self.pairingAgent = pairingAgent
            self.isFiltered = isFiltered
            self.configure = configure
        }

        /// The central at `C0:00:00:00:00:01`, at the origin.
        public static var central: Device { Device(name: "central", address: TestAddresses.central) }
        /// The peripheral at `C0:00:00:00:00:02`, 2 m away.
        public static var peripheral: Device {
            Device(name: "peripheral", address: TestAddresses.peripheral, position: VirtualPosition(x: 2, y: 0))
        }
    }

    /// How the pair is built.
    public struct Options: Sendable {
        /// The link's time scale, seed, radio model and (optionally) manual clock.
        public var link: VirtualLink.Configuration
        /// When set, both hosts' timers run on this clock (`HostConfiguration.clock`). It is
        /// the hosts' clock, not the radio's: the radio runs on `link.manualClock` when set.
        public var clock: ManualClock?
        /// The configuration both hosts start from.
        public var configuration: HostConfiguration
        public var central: Device
        public var peripheral: Device
        /// Powers both hosts on before the initializer returns.
        public var powersOn: Bool

        public init(link: VirtualLink.Configuration = .init(), clock: ManualClock? = nil,
                    configuration: HostConfiguration = HostConfiguration(), central: Device = .central,
                    peripheral: Device = .peripheral, powersOn: Bool = true) {
            self.link = link
            self.clock = clock
            self.configuration = configuration
            self.central = central
            self.peripheral = peripheral
            self.powersOn = powersOn
        }
    }

    public let link: VirtualLink
    public let centralController: VirtualController
    public let peripheralController: VirtualController
    public let central: LEHost
    public let peripheral: LEHost
    /// Between the central's host and its controller, when ``Device/isFiltered``.
    public let centralFilter: FilteringTransport?
    /// Between the peripheral's host and its controller, when ``Device/isFiltered``.
    public let peripheralFilter: FilteringTransport?

    /// Builds both devices on `link` (a new link with `options.link` when `nil`) and, unless
    /// told otherwise, powers both hosts on.
    public init(on link: VirtualLink? = nil, _ options: Options = Options()) async throws {
        let link = link ?? VirtualLink(configuration: options.link)
        self.link = link
        (centralController, centralFilter, central) = Self.make(options.central, on: link, options)
        (peripheralController, peripheralFilter, peripheral) = Self.make(options.peripheral, on: link, options)
        if let agent = options.central.pairingAgent { await central.setPairingAgent(agent) }
        if let agent = options.peripheral.pairingAgent { await peripheral.setPairingAgent(agent) }
        if options.powersOn { try await powerOn() }
    }

    /// One device's controller on `link`, and its host (not powered on).
    private static func make(_ device: Device, on link: VirtualLink, _ options: Options) -> (VirtualController, FilteringTransport?, LEHost) {
        let controller = link.addController(name: device.name, address: device.address, configuration: device.controller,
                                            position: device.position)
        var configuration = options.configuration
        if let clock = options.clock { configuration.clock = .manual(clock) }
        if let security = device.security { configuration.security = security }
        if let bondStore = device.bondStore { configuration.bondStore = bondStore }
        device.configure(&configuration)
        let filter = device.isFiltered ? FilteringTransport(controller.makeTransport()) : nil
        let host = LEHost(transport: filter ?? controller.makeTransport(), configuration: configuration)
        return (controller, filter, host)
    }

    /// A third device on the same link (a second central, say), built as the two are from
    /// `options` and `device`, with its agent set and powered on. The caller shuts it down.
    public func addHost(_ device: Device, _ options: Options = Options()) async throws -> LEHost {
        let (_, _, host) = Self.make(device, on: link, options)
        if let agent = device.pairingAgent { await host.setPairingAgent(agent) }
        try await host.powerOn()
        return host
    }

    /// Powers on the central's host, then the peripheral's.
    public func powerOn() async throws {
        try await central.powerOn()
        try await peripheral.powerOn()
    }

    /// The peripheral's address to connect to: its identity (public, or its static random
    /// address), or its controller's public address before it has one.
    public var peripheralAddress: DeviceAddress {
        get async { await peripheral.identityAddress ?? DeviceAddress(peripheralController.address, type: .public) }
    }

    /// The peripheral advertises `data` (connectable) and the central connects: both ends of
    /// the new link, once the peripheral's host has it too.
    public func connect(advertising data: AdvertisingData = AdvertisingData(), request: ConnectionRequest = ConnectionRequest(),
                        timeout: Duration = .seconds(15)) async throws -> (central: Connection, peripheral: Connection) {
        let events = await peripheral.events()
        try await peripheral.startAdvertising(data)
        let connection = try await central.connect(to: await peripheralAddress, request: request, timeout: timeout)
        let incoming = try await withTimeout("the peripheral's connected event", .seconds(30)) {
            for await event in events { if case let .connected(incoming) = event { return incoming } }
            throw TestTimeout(description: "the peripheral's events ended before it connected")
        }
        return (connection, incoming)
    }

    /// Ends the link from the central and waits until the peripheral's host saw it end.
    public func disconnect(_ connection: Connection, _ incoming: Connection) async throws {
        try await connection.disconnect()
        _ = try await incoming.waitForDisconnection()
    }

    /// Shuts both hosts down (the central's first).
    public func shutdown() async {
        await central.shutdown()
        await peripheral.shutdown()
    }
}

extension LEHost {
    /// Pairs on `connection` (this host the central) and returns once `peer`, the
    /// peripheral's host, has finished the pairing too: its end comes after the central's
    /// pair() returns (it keeps its bond once the central's keys are in).
    public func pair(_ connection: Connection, finishedBy peer: LEHost) async throws -> LinkSecurity {
        let events = await peer.events()
        let security = try await pair(connection)
        try await withTimeout("the peripheral's end of the pairing", .seconds(30)) {
            for await event in events { if case .pairingFinished = event { return } }
            throw TestTimeout(description: "the peripheral's events ended before its pairing finished")
        }
        return security
    }
}
