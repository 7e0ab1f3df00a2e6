import ArgumentParser
import Bluejay
import BluetoothHost
import BluetoothSimulator
import BluetoothTransport
import Foundation
import Logging

/// `bluejay demo`: the Bluejay API against a simulated heart-rate sensor, no hardware needed.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Scan, connect, read, write and listen to a heart-rate sensor with the Bluejay API.",
        discussion: """
        Without --hci, a simulated heart-rate sensor runs on an in-process virtual radio beside \
        the central: nothing else is needed. With --hci TRANSPORT the same central runs on that \
        controller (a real adapter, Bumble's tcp:HOST:PORT, …) and talks to the first device \
        that advertises the Heart Rate service (180D). BLUEJAY_HCI is not used by demo.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "Seconds to listen to the heart rate (0 to 86400).")
    var seconds = Seconds(whole: 5)

    @Option(name: .customLong("scan-seconds"), help: "Seconds to look for a heart-rate sensor (more than 0, at most 86400).")
    var scanSeconds = Seconds(whole: 15)

    mutating func run() async throws {
        let (hci, listening, scanning, json, verbose, capture) = (common.hci, seconds, scanSeconds, common.json, common.verbose, common.capture)
        try await runReportingBluejayErrors {
            guard !scanning.isZero else { throw CLIError.usage("--scan-seconds must be more than 0") }
            HostSession.bootstrapLogging(verbose: verbose)
            var configuration = HostConfiguration()
            configuration.capture = try capture.open()
            let environment = try await DemoEnvironment.make(hci: hci, showsProgress: !json)
            let bluejay = Bluejay(logger: Logger(label: "bluejay"))
            // Bluejay's host closes the capture when Bluejay stops.
            bluejay.start(mode: .new(StartOptions(transport: .transport(environment.transport), operationTimeout: .seconds(10),
                                                  hostConfiguration: configuration, capture: .off)))
            let central = DemoCentral(bluejay: bluejay, listeningTime: listening.duration,
                                      showsProgress: !json, scanSeconds: scanning.value)
            let outcome = await Self.runUntilInterrupted { try await central.run() }
            await bluejay.stop()
            await environment.shutdown()
            switch outcome {
            case let .finished(report):
                if json {
                    print(JSONValue.object(report.json).encoded)
                } else {
                    Console.line("")
                    report.lines.forEach(Console.line)
                }
            case let .failed(error):
                throw error
            case let .interrupted(signal):
                throw BluejayFailure("interrupted (\(signal)); disconnected", exitCode: 130)
            }
        }
    }

    private enum Outcome: Sendable {
        case finished(DemoReport)
        case failed(any Error)
        case interrupted(String)
    }

    /// Runs the central; Ctrl-C or SIGTERM cancels it (Bluejay then disconnects cleanly). The
    /// signals are handled before the central starts, so none can kill the process once it
    /// says it is listening.
    private static func runUntilInterrupted(_ body: @escaping @Sendable () async throws -> DemoReport) async -> Outcome {
        let termination = TerminationSignal()
        return await withTaskGroup(of: Outcome?.self) { group in
            group.addTask {
                do {
                    return .finished(try await body())
                } catch {
                    return .failed(error)
                }
            }
            group.addTask { await termination.wait().map(Outcome.interrupted) }
            var outcome: Outcome = .interrupted("cancelled")
            while let next = await group.next() {
                guard let next else { continue }
                outcome = next
                group.cancelAll()
                break
            }
            return outcome
        }
    }
}

/// Where the demo's central runs: beside a simulated sensor on the in-process link, or on
/// the controller `--hci` names.
struct DemoEnvironment: Sendable {
    let transport: any HCITransport
    let simulator: Simulator?

    static func make(hci: String?, showsProgress: Bool) async throws -> DemoEnvironment {
        if let hci {
            if showsProgress { Console.line("bluejay demo: the central on \(hci), looking for any heart-rate sensor") }
            return DemoEnvironment(transport: try TransportOpener.open(hci), simulator: nil)
        }
        let simulator = Simulator(link: InProcessRadio.link)
        let sensor = try await simulator.addHeartRateSensor(.init(name: "Bluejay HRM", serialNumber: "SN-0001", heartRate: .resting,
                                                                  measurementInterval: .milliseconds(250)))
        if showsProgress {
            Console.line("bluejay demo: a simulated heart-rate sensor \"\(sensor.device.declaration.name)\" (\(sensor.device.address)) "
                + "on the in-process virtual link")
        }
        return DemoEnvironment(transport: try TransportOpener.open("virtual"), simulator: simulator)
    }

    func shutdown() async {
        await simulator?.shutdown()
    }
}
