import ArgumentParser
import BluetoothCore
import BluetoothSimulator
import BluetoothTransport
import BluetoothVirtual
import Foundation

/// `bluejay virtual`: virtual controllers served over HCI/TCP, so that Bumble or any host
/// that speaks H4 can use them; all of them share one simulated radio link.
struct VirtualCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "virtual",
        abstract: "Serve virtual LE controllers over HCI/TCP (H4), all on one simulated radio.",
        discussion: """
        Each --listen serves one controller (port 0 picks a free port). The actual addresses are \
        printed one per line (tcp:HOST:PORT), then `ready`. Bluejay opens them with --hci \
        tcp:HOST:PORT, Bumble with tcp-client:HOST:PORT. Runs until Ctrl-C or SIGTERM. With \
        --capture FILE each controller's traffic goes to a file of its own: FILE with -1, -2, … \
        before its extension.
        """
    )

    @Option(name: .customLong("listen"), help: ArgumentHelp("Serve a controller on tcp:HOST:PORT (repeatable).", valueName: "tcp:host:port"))
    var listens: [String] = []

    @Flag(help: "Also run a simulated heart-rate sensor on the link.")
    var sensor = false

    @Option(name: .customLong("sensor-name"), help: "The sensor's advertised name.")
    var sensorName = "Bluejay HRM"

    @Option(help: "The sensor's serial number.")
    var serial = "SN-0001"

    @Option(name: .customLong("time-scale"), help: "Simulated seconds per real second (more than 0, at most 1000).")
    var timeScale: Double = 1

    @Flag(name: [.short, .long], help: "Log protocol details to stderr.")
    var verbose = false

    /// One capture per controller: FILE with -1, -2, … before its extension.
    @OptionGroup var capture: CaptureOptions

    mutating func run() async throws {
        let (listens, withSensor, sensorName, serial, timeScale, verbose, capture) = (listens, sensor, sensorName, serial, timeScale, verbose, capture)
        try await runReportingBluejayErrors {
            #if canImport(Glibc)
            let endpoints = try listens.map(Self.endpoint)
            guard !endpoints.isEmpty else { throw CLIError.usage("give at least one --listen tcp:HOST:PORT (port 0 for any free one)") }
            guard timeScale > 0, timeScale <= 1000 else { throw CLIError.usage("--time-scale must be more than 0 and at most 1000") }
            HostSession.bootstrapLogging(verbose: verbose)
            let termination = TerminationSignal()
            let link = VirtualLink(configuration: VirtualLink.Configuration(timeScale: timeScale))
            var servers: [VirtualControllerServer] = []
            var captures: [HCICapture] = []
            defer { captures.forEach { $0.close() } }
            let simulator = Simulator(link: link)
            do {
                for (index, endpoint) in endpoints.enumerated() {
                    let controller = link.addController(name: "controller-\(index + 1)", address: Self.address(index))
                    let controllerCapture = try capture.open(suffix: "-\(index + 1)")
                    if let controllerCapture { captures.append(controllerCapture) }
                    let server = VirtualControllerServer(controller: controller, host: endpoint.host, port: endpoint.port, capture: controllerCapture)
                    servers.append(server)
                    do throws(TransportError) {
                        try server.start()
                    } catch {
                        throw CLIError.transport(error)
                    }
                    Console.line(server.transportSpecification ?? "tcp:\(endpoint.host):?")
                }
                if withSensor {
                    let sensor = try await simulator.addHeartRateSensor(.init(name: sensorName, serialNumber: serial))
                    Console.line("sensor: \"\(sensorName)\" at \(sensor.device.address) (public), serial \(serial)")
                }
                Console.line("ready")
            } catch {
                servers.forEach { $0.stop() }
                await simulator.shutdown()
                link.shutdown()
                throw error
            }
            let signal = await termination.wait() ?? "cancelled"
            servers.forEach { $0.stop() }
            await simulator.shutdown()
            link.shutdown()
            Output.error("bluejay virtual: stopped (\(signal))")
            #else
            throw CLIError.usage("bluejay virtual needs Linux sockets")
            #endif
        }
    }

    /// `tcp:HOST:PORT` as a host and a port; unlike a transport to open, port 0 (any free
    /// one) is allowed.
    private static func endpoint(_ text: String) throws -> (host: String, port: UInt16) {
        let usage = CLIError.usage("--listen takes tcp:HOST:PORT with an IPv4 host and a port from 0 to 65535 (e.g. tcp:127.0.0.1:0), not \(text)")
        guard text.hasPrefix("tcp:"), let colon = text.lastIndex(of: ":"), colon > text.index(text.startIndex, offsetBy: 3) else { throw usage }
        let host = String(text[text.index(text.startIndex, offsetBy: 4)..<colon])
        guard !host.isEmpty, let port = UInt16(text[text.index(after: colon)...]) else { throw usage }
        return (host, port)
    }

    /// `C0:DE:00:00:00:0N` for the N-th controller.
    private static func address(_ index: Int) -> BluetoothAddress {
        BluetoothAddress(bytes: [0xC0, 0xDE, 0x00, 0x00, UInt8(truncatingIfNeeded: (index + 1) >> 8), UInt8(truncatingIfNeeded: index + 1)]) ?? .zero
    }
}
