import Bluejay
import BluetoothBlueZ
import BluetoothCore
import BluetoothHost
import BluetoothTransport
import Dispatch
import Foundation
import Logging
import ArgumentParser

/// Opens the controller, runs a command against a powered-on host, and always shuts the host
/// down afterwards (disconnecting cleanly, even after Ctrl-C), so that a shared controller
/// such as Bumble's is not left with a stale link.
enum HostSession {
    static func run<T: Sendable>(_ options: CommonOptions, security: SecurityOptions? = nil,
                                 _ body: @escaping @Sendable (LEHost) async throws -> T) async throws -> T {
        bootstrapLogging(verbose: options.verbose)
        // Ctrl-C and SIGTERM are handled from here on, so that one arriving at any point (even
        // the moment the command says it is ready) ends the command through its shutdown,
        // which disconnects and closes the capture, rather than killing the process.
        let interrupt = TerminationSignal()
        let transport = try TransportOpener.open(try options.transport())
        let logger = Logger(label: "bluejay")
        var configuration = security?.configuration(logger: logger) ?? HostConfiguration()
        // A controller without a public address gets the same static identity every run, so
        // that peers that bonded with it (through `bluejay pair`) still know it.
        if configuration.staticAddressStore == nil, !(configuration.bondStore is FileBondStore) {
            configuration.staticAddressStore = FileStaticAddressStore(directory: StateDirectory.bondDirectory, logger: logger)
        }
        do {
            configuration.capture = try options.capture.open()
        } catch {
            transport.close()
            throw error
        }
        // The host closes the capture in shutdown().
        let host = LEHost(transport: transport, configuration: configuration, logger: logger)
        if let security {
            await host.setPairingAgent(TerminalPairingAgent(passkey: security.passkey, alwaysConfirm: security.yes,
                                                                      allowsReplacement: security.replaceBond))
        }
        return try await started(on: interrupt, start: { _ = try await host.powerOn() }, shutdown: { await host.shutdown() }) {
            try await body(host)
        }
    }

    /// Runs a central-role command on the backend the transport names: our host (as
    /// ``run(_:security:_:)``), or BlueZ for `bluez` and `bluez:hciN` (with the terminal's
    /// pairing agent registered as BlueZ's agent).
    static func runCentral<T: Sendable>(_ options: CommonOptions, security: SecurityOptions? = nil,
                                        _ body: @escaping @Sendable (any CentralBackend) async throws -> T) async throws -> T {
        let text = try options.transport()
        guard case let .bluez(adapter)? = try? TransportSpecification(parsing: text) else {
            return try await run(options, security: security) { host in try await body(host) }
        }
        bootstrapLogging(verbose: options.verbose)
        // Handled from here on, as in ``run(_:security:_:)``.
        let interrupt = TerminationSignal()
        let logger = Logger(label: "bluejay")
        if options.capture.path != nil {
            throw CLIError.usage("--capture records our own host's HCI traffic; over BlueZ run btmon (btmon -w FILE) instead")
        }
        // Without security options: no input or output, as our host's default (Just Works).
        let capability = security?.configuration(logger: logger).security.ioCapability ?? .noInputNoOutput
        let backend = BlueZCentral(adapter: adapter, ioCapability: capability, logger: logger)
        return try await started(on: interrupt, start: {
            try await backend.start()
            // Always an agent: bluetoothd pairs on its own when a peer refuses a read for lack of
            // encryption, and without an agent that pairing waits for one.
            await backend.setPairingAgent(TerminalPairingAgent(passkey: security?.passkey, alwaysConfirm: security?.yes ?? false,
                                                               allowsReplacement: security?.replaceBond ?? false))
        }, shutdown: { await backend.shutdown() }) {
            try await body(backend)
        }
    }

    /// Runs a peripheral-role command on the backend the transport names: our host (as
    /// ``run(_:security:_:)``), or BlueZ's advertising manager and GATT server for `bluez`
    /// and `bluez:hciN`.
    static func runPeripheral<T: Sendable>(_ options: CommonOptions, name: String,
                                           _ body: @escaping @Sendable (any PeripheralBackend) async throws -> T) async throws -> T {
        let text = try options.transport()
        guard case let .bluez(adapter)? = try? TransportSpecification(parsing: text) else {
            return try await run(options) { host in try await body(host) }
        }
        bootstrapLogging(verbose: options.verbose)
        let interrupt = TerminationSignal()
        if options.capture.path != nil {
            throw CLIError.usage("--capture records our own host's HCI traffic; over BlueZ run btmon (btmon -w FILE) instead")
        }
        let backend = BlueZPeripheral(adapter: adapter, name: name, logger: Logger(label: "bluejay"))
        return try await started(on: interrupt, start: { try await backend.start() }, shutdown: { await backend.shutdown() }) {
            try await body(backend)
        }
    }

    /// Starts, runs `body` (cancelled by Ctrl-C or SIGTERM), and always shuts down, also when
    /// starting or `body` failed.
    private static func started<T: Sendable>(on interrupt: TerminationSignal, start: () async throws -> Void,
                                             shutdown: () async -> Void,
                                             _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        do {
            try await start()
            let result = try await cancelling(on: interrupt, body)
            await shutdown()
            return result
        } catch {
            await shutdown()
            throw error
        }
    }

    /// Runs `body` in a task that Ctrl-C or SIGTERM cancels, so the command can still clean up.
    /// The signals stay handled (and ignored) after it, through the shutdown.
    private static func cancelling<T: Sendable>(on interrupt: TerminationSignal,
                                                _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        let watcher = Task {
            if await interrupt.wait() != nil { task.cancel() }
        }
        defer { watcher.cancel() }
        return try await task.value
    }

    /// Logs go to stderr: warnings only, everything with `--verbose`. Once per process.
    static func bootstrapLogging(verbose: Bool) {
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = verbose ? .trace : .warning
            return handler
        }
    }
}

/// Opens a transport from its string form. `virtual` and `virtual:NAME` open an in-process
/// virtual controller the way the Bluejay module does (`InProcessRadio`).
enum TransportOpener {
    static func open(_ text: String) throws -> any HCITransport {
        let specification: TransportSpecification
        do {
            specification = try TransportSpecification(parsing: text)
        } catch {
            throw CLIError.transport(error)
        }
        if case .bluez = specification {
            throw CLIError.usage("this command needs our own host on an HCI transport (hciN, tcp:…, serial:…); "
                + "\(text) runs on BlueZ, which scan, gatt, read, write, listen, pair, adapters and advertise (legacy) use")
        }
        if case let .virtual(name) = specification {
            do {
                return try InProcessRadio.openTransport(name: name)
            } catch {
                throw CLIError.transport(.invalidSpecification(text, reason: "\(error)"))
            }
        }
        do {
            return try SystemTransports.open(specification)
        } catch {
            throw CLIError.transport(error)
        }
    }
}

/// Runs a command body and turns failures into a message on stderr and an exit code.
func runReportingErrors(_ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch let error as CleanExit {
        throw error
    } catch {
        let cliError = CLIError.from(error)
        Output.error("bluejay: \(cliError)")
        throw ExitCode(cliError.exitCode)
    }
}

