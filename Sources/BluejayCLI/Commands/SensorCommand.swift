import ArgumentParser
import BluetoothCore
import BluetoothHost
import BluetoothSimulator
import BluetoothTransport
import Foundation
import GATTProfiles

/// `bluejay sensor`: the simulated heart-rate sensor as a peripheral on a real, Bumble or
/// virtual controller, for another machine or stack to connect to.
struct SensorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sensor",
        abstract: "Run the simulated heart-rate sensor on a controller until Ctrl-C.",
        discussion: """
        The sensor advertises Heart Rate (180D) and Battery (180F) under its name and serves \
        Heart Rate Measurement (2A37, notified every --interval seconds), Body Sensor Location \
        (2A38, read/write), Heart Rate Control Point (2A39), Device Information (180A, with the \
        serial number) and Battery Level (2A19). Connections, subscriptions, reads and writes are \
        printed as they happen.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(help: "The advertised name.")
    var name = "Bluejay HRM"

    @Option(help: "The serial number (Device Information, 2A25).")
    var serial = "SN-0001"

    @Option(help: "Seconds between heart rate notifications (more than 0, at most 86400).")
    var interval = Seconds(whole: 1)

    mutating func run() async throws {
        let (common, name, serial, interval) = (common, name, serial, interval)
        try await runReportingBluejayErrors {
            guard !interval.isZero else { throw CLIError.usage("--interval must be more than 0 seconds") }
            HostSession.bootstrapLogging(verbose: common.verbose)
            let transportName = try common.transport()
            let capture = try common.capture.open()
            defer { capture?.close() }
            let opened = try TransportOpener.open(transportName)
            let transport = capture.map { CapturingTransport(opened, capture: $0) } ?? opened
            let configuration = HeartRateSensor.Configuration(name: name, serialNumber: serial, heartRate: .resting,
                                                              measurementInterval: interval.duration)
            let termination = TerminationSignal()
            let sensor = try await HeartRateSensor.start(transport: transport, configuration: configuration)
            let output = Output(json: common.json)
            let events = sensor.device.events()
            let hostEvents = await sensor.device.host.events()
            output.emit(["event": .string("advertising"), "name": .string(name), "serial": .string(serial),
                         "address": .string(sensor.device.address.description), "transport": .string(transportName)],
                        line: "sensor \"\(name)\" (serial \(serial)) advertising as \(sensor.device.address) on \(transportName); Ctrl-C to stop")
            Console.flush()
            let printer = Task {
                for await event in events {
                    Self.report(event, output: output)
                    Console.flush()
                }
            }
            let ending = await Self.waitForEnd(termination, hostEvents)
            printer.cancel()
            let sent = sensor.measurementsSent
            await sensor.stop()
            switch ending {
            case let .signal(name):
                output.emit(["event": .string("stopped"), "signal": .string(name), "measurements": .int(sent)],
                            line: "stopped (\(name)) after \(sent) heart rate measurement\(sent == 1 ? "" : "s")")
                Console.flush()
            case let .transportClosed(reason):
                throw BluejayFailure("the controller went away: \(reason)", exitCode: 74)
            }
        }
    }

    private enum Ending: Sendable {
        case signal(String)
        case transportClosed(String)
    }

    /// Ctrl-C or SIGTERM, or the controller going away.
    private static func waitForEnd(_ termination: TerminationSignal, _ hostEvents: AsyncStream<HostEvent>) async -> Ending {
        await withTaskGroup(of: Ending?.self) { group in
            group.addTask { await termination.wait().map(Ending.signal) }
            group.addTask {
                for await event in hostEvents {
                    if case let .transportClosed(reason) = event { return .transportClosed(reason.map { "\($0)" } ?? "transport closed") }
                }
                return Task.isCancelled ? nil : .transportClosed("transport closed")
            }
            var ending: Ending = .signal("cancelled")
            while let next = await group.next() {
                guard let next else { continue }
                ending = next
                group.cancelAll()
                break
            }
            return ending
        }
    }

    /// One line (or JSON object) per event.
    private static func report(_ event: SimulatedDeviceEvent, output: Output) {
        let stamp = Date().timeIntervalSince1970
        switch event {
        case let .connected(central):
            output.emit(["event": .string("connected"), "central": .optional(central.address?.description),
                         "handle": .int(Int(central.connectionHandle)), "time": .double(stamp)],
                        line: "connected: \(central)")
        case let .disconnected(central, reason):
            output.emit(["event": .string("disconnected"), "central": .optional(central.address?.description),
                         "reason": .int(Int(reason.rawValue)), "time": .double(stamp)],
                        line: "disconnected: \(central) (\(reason))")
        case let .subscriptionChanged(central, uuid, notifying, indicating):
            let what = notifying ? "notifications on" : indicating ? "indications on" : "off"
            output.emit(["event": .string("subscribed"), "uuid": .string(uuid.description), "notify": .bool(notifying),
                         "indicate": .bool(indicating), "central": .optional(central.address?.description), "time": .double(stamp)],
                        line: "subscription: \(describe(uuid)) \(what) (\(central))")
        case let .read(_, uuid, response):
            output.emit(["event": .string("read"), "uuid": .string(uuid.description), "answer": .string(describe(response)), "time": .double(stamp)],
                        line: "read: \(describe(uuid)) → \(describe(response))")
        case let .written(_, uuid, value, _, response):
            output.emit(["event": .string("written"), "uuid": .string(uuid.description), "value": .hex(value),
                         "accepted": .bool(response == .success), "time": .double(stamp)],
                        line: "written: \(describe(uuid)) ← \(Hex.encode(value))\(response == .success ? "" : " (refused: \(response))")")
        case let .failureInjected(failure, uuid):
            output.emit(["event": .string("failure"), "uuid": .string(uuid.description), "failure": .string("\(failure)")],
                        line: "injected failure on \(describe(uuid)): \(failure)")
        }
    }

    private static func describe(_ uuid: BluetoothUUID) -> String {
        GATTNames.name(forCharacteristic: uuid).map { "\(uuid) (\($0))" } ?? uuid.description
    }

    private static func describe(_ response: GATTReadResponse) -> String {
        switch response {
        case let .value(bytes): return Hex.encode(bytes)
        case let .error(code): return "\(code)"
        }
    }
}
