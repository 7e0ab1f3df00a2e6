import Bluejay
import Foundation
import Synchronization

/// The demo's central, written with the Bluejay API the way the README shows it: scan and
/// connect, read and write the body sensor location, listen to the heart rate, run a
/// background task, disconnect.
struct DemoCentral: Sendable {
    let bluejay: Bluejay
    /// How long to listen to the heart rate.
    let listeningTime: Duration
    /// Progress lines and the live heart-rate line (off in JSON mode).
    let showsProgress: Bool

    /// How long to look for a sensor.
    let scanSeconds: TimeInterval
    /// How long to wait for the sensor to accept the connection.
    static let connectTimeout: Timeout = .seconds(10)

    func run() async throws -> DemoReport {
        var report = DemoReport()
        let clock = ContinuousClock()
        let start = clock.now
        try await bluejay.waitUntilReady()

        // Scan for heart-rate sensors and connect to the first one found.
        say("scanning for heart-rate sensors (service 180D)…")
        let (discovery, foundAfter) = try await scanAndConnect()
        report.device = discovery.peripheralIdentifier.description
        report.rssi = discovery.rssi
        report.mtu = bluejay.attMTU
        report.scanTime = foundAfter
        report.connectTime = (clock.now - start) - foundAfter
        say("found \(discovery.peripheralIdentifier) at \(discovery.rssi) dBm in \(foundAfter.demoSeconds)")
        say("connected in \(report.connectTime.demoSeconds)\(bluejay.attMTU.map { " (ATT MTU \($0))" } ?? "")")

        // Read the body sensor location, write another one, read it back.
        let exchangeStart = clock.now
        let before: UInt8 = try await bluejay.read(from: DemoIdentifiers.bodySensorLocation)
        report.locationBefore = before
        say("body sensor location: \(DemoIdentifiers.locationName(before))")
        let wanted: UInt8 = before == 2 ? 1 : 2
        do {
            try await bluejay.write(to: DemoIdentifiers.bodySensorLocation, value: wanted)
            report.locationWritten = wanted
            let after: UInt8 = try await bluejay.read(from: DemoIdentifiers.bodySensorLocation)
            report.locationAfter = after
            say("wrote body sensor location \(DemoIdentifiers.locationName(wanted)); read back \(DemoIdentifiers.locationName(after))")
        } catch {
            // Many real sensors have a read-only location: not a reason to stop.
            guard case let .attError(code, _, _) = error else { throw error }
            report.writeRefused = "\(code)"
            say("the sensor refused the new location: \(code)")
        }
        report.exchangeTime = clock.now - exchangeStart

        // Listen to the heart rate.
        say("listening to heart rate for \(listeningTime.demoSeconds)…")
        let listenStart = clock.now
        (report.heartRate, report.listenError) = try await listenToHeartRate()
        report.listenTime = clock.now - listenStart

        // A background task: synchronous calls on a thread of its own.
        let backgroundStart = clock.now
        report.background = try await backgroundTask(restoring: report.locationWritten == nil ? nil : before)
        report.backgroundTime = clock.now - backgroundStart
        say("background task: " + backgroundLine(report.background))

        let disconnectStart = clock.now
        try await bluejay.disconnect()
        report.disconnectTime = clock.now - disconnectStart
        say("disconnected")
        report.totalTime = clock.now - start
        return report
    }

    // MARK: Steps

    /// The README's scan: report each heart-rate sensor, connect to the first.
    private func scanAndConnect() async throws -> (ScanDiscovery, Duration) {
        let start = ContinuousClock.now
        let foundAt = Mutex<Duration>(.zero)
        let scanSeconds = scanSeconds
        let discovery: ScanDiscovery = try await withCheckedThrowingContinuation { continuation in
            let once = ResumeOnce(continuation)
            bluejay.scan(duration: scanSeconds, serviceIdentifiers: [DemoIdentifiers.heartRateService], discovery: { discovery, _ in
                foundAt.withLock { $0 = start.duration(to: .now) }
                return .connect(discovery, Self.connectTimeout, .default) { result in
                    switch result {
                    case .success: once.resume(returning: discovery)
                    case let .failure(error): once.resume(throwing: error)
                    }
                }
            }, stopped: { discoveries, error in
                if let error {
                    once.resume(throwing: error)
                } else if discoveries.isEmpty {
                    once.resume(throwing: BluejayFailure("no heart-rate sensor (service 180D) found within \(scanSeconds) s", exitCode: 69))
                }
            })
        }
        return (discovery, foundAt.withLock { $0 })
    }

    /// Listens for ``listeningTime`` with a live line, then ends the listen.
    private func listenToHeartRate() async throws -> (HeartRateSummary, String?) {
        let summary = Mutex(HeartRateSummary())
        let failure = Mutex<BluejayError?>(nil)
        let showsProgress = showsProgress
        bluejay.listen(to: DemoIdentifiers.heartRate, multipleListenOption: .replaceable) { (result: ReadResult<HeartRateMeasurement>) in
            switch result {
            case let .success(heartRate):
                let line = summary.withLock { summary in
                    summary.add(heartRate)
                    return summary.liveLine
                }
                if showsProgress { Console.live(line) }
            case let .failure(error):
                failure.withLock { $0 = $0 ?? error }
            }
        }
        try await Task.sleep(for: listeningTime)
        if showsProgress { Console.endLiveLine() }
        let collected = summary.withLock { $0 }
        if let error = failure.withLock({ $0 }) {
            // A listen that could not be set up (no 2A37, say) is the demo failing.
            guard collected.count > 0 else { throw error }
            return (collected, error.description)
        }
        try await bluejay.endListen(to: DemoIdentifiers.heartRate)
        return (collected, nil)
    }

    /// Battery level, serial number, and the location put back with one writeAndRead.
    private func backgroundTask(restoring location: UInt8?) async throws -> BackgroundResults {
        try await withCheckedThrowingContinuation { continuation in
            bluejay.run(backgroundTask: { peripheral in
                var results = BackgroundResults()
                results.battery = try Self.optional("battery level", into: &results) { try peripheral.read(from: DemoIdentifiers.batteryLevel) }
                results.serial = try Self.optional("serial number", into: &results) { try peripheral.read(from: DemoIdentifiers.serialNumber) }
                if let location {
                    results.restoredLocation = try Self.optional("restoring the location", into: &results) {
                        try peripheral.writeAndRead(writeTo: DemoIdentifiers.bodySensorLocation, value: location,
                                                    readFrom: DemoIdentifiers.bodySensorLocation)
                    }
                }
                return results
            }, completionOnMainThread: { result in
                continuation.resume(with: result)
            })
        }
    }

    /// A value the sensor may not have: a missing service or an ATT error becomes a note;
    /// anything else (a lost link) ends the task.
    private static func optional<T>(_ what: String, into results: inout BackgroundResults, _ read: () throws -> T) throws -> T? {
        do {
            return try read()
        } catch let error as BluejayError {
            switch error {
            case .missingService, .missingCharacteristic, .attError, .deserializationFailed:
                results.notes.append("\(what): \(error)")
                return nil
            default:
                throw error
            }
        }
    }

    private func backgroundLine(_ results: BackgroundResults) -> String {
        var parts: [String] = []
        if let battery = results.battery { parts.append("battery \(battery) %") }
        if let serial = results.serial { parts.append("serial \(serial)") }
        if let restored = results.restoredLocation { parts.append("location restored to \(DemoIdentifiers.locationName(restored)) (writeAndRead)") }
        return (parts + results.notes).joined(separator: ", ")
    }

    private func say(_ line: String) {
        if showsProgress { Console.line(line) }
    }
}

/// Resumes a continuation once; later calls do nothing.
final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T, any Error>?>

    init(_ continuation: CheckedContinuation<T, any Error>) {
        self.continuation = Mutex(continuation)
    }

    func resume(returning value: T) {
        take()?.resume(returning: value)
    }

    func resume(throwing error: any Error) {
        take()?.resume(throwing: error)
    }

    private func take() -> CheckedContinuation<T, any Error>? {
        continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
    }
}
