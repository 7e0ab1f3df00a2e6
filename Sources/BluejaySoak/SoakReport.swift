import Foundation

/// What a run did and whether it kept every invariant.
struct SoakReport: Sendable {
    struct Samples: Sendable {
        var start: ProcessSample?
        var warmUp: ProcessSample?
        var endOfLoad: ProcessSample?
        var afterShutdown: ProcessSample?
        /// RSS (KiB) every ``SoakReport/trendInterval`` after the warm-up, by minutes since it.
        var trend: [(minutes: Double, rssKiB: Int, heapKiB: Int)] = []
    }

    struct Invariant: Sendable {
        var passed: Bool
        var text: String
    }

    /// How often the process is sampled after the warm-up.
    static let trendInterval: Duration = .seconds(5)

    let settings: SoakSettings
    var samples = Samples()
    var setupFailure: String?
    var loadTime: Duration = .zero
    var shutdownTime: Duration = .zero
    var shutdownHung = false
    var watchdogFired = false
    /// Centrals without a successful operation, and peripherals without a central
    /// connecting, in the last ``SoakSettings/livenessWindow`` of the load.
    var idleCentrals: [String] = []
    var idlePeripherals: [String] = []

    // Captured at the end (``capture(_:)``).
    var statistics = SoakStatistics.Snapshot()
    var deliveries = DeliveryAudit.Totals()
    var tasksStarted = 0
    var tasksAlive: [String: Int] = [:]
    var componentsMade: [String: Int] = [:]
    var componentsAlive: [String: Int] = [:]
    var logErrors = 0
    var logWarnings = 0
    var topLogLines: [(String, Int)] = []

    init(settings: SoakSettings) {
        self.settings = settings
    }

    mutating func capture(_ context: SoakContext) {
        statistics = context.statistics.snapshot
        deliveries = context.audit.totals
        tasksStarted = context.tasks.startedCount
        tasksAlive = context.tasks.aliveNames
        componentsMade = context.lifetimes.madeCounts
        componentsAlive = context.lifetimes.aliveCounts
        logErrors = context.logs.count(.error) + context.logs.count(.critical)
        logWarnings = context.logs.count(.warning)
        topLogLines = context.logs.top(8)
    }

    // MARK: Invariants

    var invariants: [Invariant] {
        var list: [Invariant] = []
        if let setupFailure { list.append(Invariant(passed: false, text: "the world started: \(setupFailure)")) }
        list.append(Invariant(passed: !watchdogFired, text: watchdogFired ? "the watchdog ended the run: it did not finish in time" : "the run finished before the watchdog"))
        list.append(Invariant(passed: statistics.operationsDone > 0, text: "operations were done (\(statistics.operationsDone))"))
        let stuck = idleCentrals + idlePeripherals
        list.append(Invariant(passed: stuck.isEmpty,
                              text: "every central still completed operations and every peripheral still took connections in the last "
                                  + "\(seconds(settings.livenessWindow)) of the load" + (stuck.isEmpty ? "" : " (not: \(stuck.joined(separator: ", ")))")))
        let minimum = settings.minimumDeliveries
        list.append(Invariant(passed: deliveries.delivered >= minimum,
                              text: "at least \(minimum) numbered values delivered and compared with what was sent (\(deliveries.delivered))"))
        list.append(Invariant(passed: deliveries.lost == 0,
                              text: "every value sent to a listening central arrived, or a link break explains its loss "
                                  + "(\(deliveries.lost) lost otherwise, \(deliveries.lostWithLinkBreak) with a link break)"))
        list.append(Invariant(passed: deliveries.duplicated == 0, text: "no value duplicated or out of order on a link (\(deliveries.duplicated))"))
        list.append(Invariant(passed: deliveries.unexpected == 0,
                              text: "no value received that its peripheral did not send to that central (\(deliveries.unexpected))"))
        let failedStreams = deliveries.streamEnds.filter { $0.key.hasPrefix("failed") }.values.reduce(0, +)
        list.append(Invariant(passed: deliveries.streamFailures == 0,
                              text: "no listen's stream failed but with its link (\(deliveries.streamFailures) otherwise; \(failedStreams) in all, "
                                  + "of \(deliveries.listens) listens)"))
        list.append(Invariant(passed: statistics.integrityViolations == 0,
                              text: "every value read back was one written (\(statistics.integrityViolations) not), every discovery complete"))
        list.append(Invariant(passed: statistics.hangs.isEmpty,
                              text: "no operation hung (\(statistics.hangs.count) of \(statistics.operationsDone) over \(SoakSettings.operationHangLimit))"))
        list.append(Invariant(passed: !shutdownHung, text: "shutdown finished (\(seconds(shutdownTime)), limit \(SoakSettings.shutdownLimit))"))
        if let warmUp = samples.warmUp, let end = samples.endOfLoad {
            let growth = end.rssKiB - warmUp.rssKiB
            let tolerance = SoakSettings.rssTolerance(warmUpKiB: warmUp.rssKiB)
            list.append(Invariant(passed: growth <= tolerance,
                                  text: "RSS growth after warm-up \(signed(growth)) ≤ \(ProcessSample.mebibytes(tolerance)) "
                                      + "(\(ProcessSample.mebibytes(warmUp.rssKiB)) → \(ProcessSample.mebibytes(end.rssKiB)))"))
            if let warmUpHeap = warmUp.heapInUseKiB, let endHeap = end.heapInUseKiB {
                let heapTolerance = SoakSettings.heapTolerance(warmUpKiB: warmUpHeap)
                list.append(Invariant(passed: endHeap - warmUpHeap <= heapTolerance,
                                      text: "heap in use growth after warm-up \(signed(endHeap - warmUpHeap)) ≤ \(ProcessSample.mebibytes(heapTolerance)) "
                                          + "(\(ProcessSample.mebibytes(warmUpHeap)) → \(ProcessSample.mebibytes(endHeap)))"))
            }
            list.append(Invariant(passed: end.fileDescriptors <= warmUp.fileDescriptors,
                                  text: "no file descriptor opened after warm-up (\(warmUp.fileDescriptors) → \(end.fileDescriptors))"))
        } else {
            list.append(Invariant(passed: false, text: "the process was sampled after warm-up and at the end of the load"))
        }
        if let end = samples.endOfLoad, let after = samples.afterShutdown {
            list.append(Invariant(passed: after.fileDescriptors <= end.fileDescriptors,
                                  text: "no file descriptor left open by shutdown (\(end.fileDescriptors) at the end of the load, \(after.fileDescriptors) after)"))
        }
        let aliveTasks = tasksAlive.values.reduce(0, +)
        list.append(Invariant(passed: aliveTasks == 0, text: "no task alive after shutdown (\(aliveTasks) of \(tasksStarted) started)"))
        let aliveComponents = componentsAlive.values.reduce(0, +)
        let madeComponents = componentsMade.values.reduce(0, +)
        list.append(Invariant(passed: aliveComponents == 0, text: "no component alive after shutdown (\(aliveComponents) of \(madeComponents) made)"))
        return list
    }

    var passed: Bool { invariants.allSatisfy(\.passed) }

    // MARK: Text

    var text: String {
        var lines: [String] = []
        let mtus = (0..<settings.peripherals).map { String(SoakPeripheral.mtus[$0 % SoakPeripheral.mtus.count]) }.joined(separator: ", ")
        lines.append("bluejay-soak: seed \(settings.seed) (replay: SOAK_SEED=\(settings.seed)), \(seconds(settings.duration)) of load "
            + "(warm-up \(seconds(settings.warmUp))), \(settings.centrals) centrals, \(settings.peripherals) peripherals (ATT MTU \(mtus)), "
            + "link time ×\(settings.timeScale)")
        lines.append("load \(seconds(loadTime)) (the last operations end after the \(seconds(settings.duration))), shutdown \(seconds(shutdownTime))"
            + (settings.appRecovery ? "" : "; apps do not restart their stack after a Hardware Error"))

        let done = statistics.operationsDone
        let failed = statistics.operations.values.reduce(0) { $0 + $1.failed }
        lines.append("")
        lines.append("operations: \(done) done, \(done - failed) succeeded, \(failed) failed")
        for (operation, outcomes) in statistics.operations.sorted(by: { $0.key < $1.key }) {
            lines.append("  " + pad(operation.rawValue, 24) + pad("\(outcomes.succeeded)", 8, right: true) + " ok"
                + pad("\(outcomes.failed)", 8, right: true) + " failed" + pad(outcomes.meanTime.map { "mean \(milliseconds($0)) when ok" } ?? "", 26, right: true)
                + ", longest \(milliseconds(outcomes.longest))")
        }
        lines.append("faults injected: \(statistics.faultsInjected)")
        for (fault, count) in statistics.faults.sorted(by: { $0.value > $1.value }) {
            lines.append("  " + pad(fault, 48) + pad("\(count)", 8, right: true))
        }
        lines.append("errors by type (operations that failed):")
        if statistics.errors.isEmpty { lines.append("  none") }
        let errorCounts = statistics.errors.mapValues { $0.values.reduce(0, +) }
        for (type, count) in errorCounts.sorted(by: { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }) {
            let operations = (statistics.errors[type] ?? [:]).sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }
            lines.append("  " + pad(type, 52) + pad("\(count)", 7, right: true) + "  in " + operations.map { "\($0.key.rawValue) \($0.value)" }.joined(separator: ", "))
        }
        if !statistics.peripheralErrors.isEmpty {
            lines.append("peripheral errors (notifying, advertising, rebooting):")
            for (type, count) in statistics.peripheralErrors.sorted(by: { $0.value > $1.value }) {
                lines.append("  " + pad(type, 64) + pad("\(count)", 8, right: true))
            }
        }
        let streamEnds = deliveries.streamEnds.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        lines.append("notifications and indications: \(deliveries.sent) sent to subscribed centrals, \(deliveries.received) received "
            + "in \(deliveries.listens) listens; of the sent, \(deliveries.delivered) delivered, \(deliveries.lost) lost while listened to, "
            + "\(deliveries.lostWithLinkBreak) lost with a link break, \(deliveries.notRequired) not required (sent outside a listen or in flight at its end); "
            + "\(deliveries.duplicated) duplicated or reordered, \(deliveries.unexpected) unexpected, \(deliveries.partialSends) from failed sends; "
            + "slowest delivery \(milliseconds(deliveries.slowestDelivery)); "
            + "streams ended without their central: " + (streamEnds.isEmpty ? "none" : streamEnds.joined(separator: ", ")))
        deliveries.examples.forEach { lines.append("  " + $0) }
        lines.append("values read back: \(statistics.integrityViolations) that no write could have left")
        statistics.integrityExamples.forEach { lines.append("  " + $0) }
        statistics.hangs.prefix(SoakStatistics.examplesKept).forEach { lines.append("hang: " + $0) }
        lines.append("stack log: \(logErrors) errors, \(logWarnings) warnings" + (topLogLines.isEmpty ? "" : "; most frequent:"))
        topLogLines.forEach { lines.append("  " + pad("\($0.1)", 6, right: true) + "  " + $0.0) }

        lines.append("process (after malloc_trim):")
        let rows: [(String, ProcessSample?)] = [("start", samples.start), ("after warm-up", samples.warmUp),
                                                ("end of load", samples.endOfLoad), ("after shutdown", samples.afterShutdown)]
        for (label, sample) in rows {
            lines.append("  " + pad(label, 16) + (sample.map { "\($0)" } ?? "-"))
        }
        if let trend = trendLine { lines.append("  " + trend) }
        if let start = samples.start, let after = samples.afterShutdown {
            let opened = after.descriptors.filter { start.descriptors[$0.key] != $0.value }.sorted { $0.key < $1.key }
            if !opened.isEmpty {
                lines.append("  descriptors open after shutdown that were not at start: " + opened.map { "\($0.key) → \($0.value)" }.joined(separator: ", "))
            }
        }
        lines.append("after shutdown: \(tasksAlive.values.reduce(0, +)) of \(tasksStarted) tasks alive; components alive "
            + "\(componentsAlive.values.reduce(0, +)) of \(componentsMade.values.reduce(0, +)) made ("
            + componentsMade.sorted { $0.key < $1.key }.map { "\($0.key) \(componentsAlive[$0.key] ?? 0)/\($0.value)" }.joined(separator: ", ") + ")")
        for (name, count) in tasksAlive.sorted(by: { $0.key < $1.key }) { lines.append("  task alive: \(name) ×\(count)") }

        lines.append("")
        lines.append("invariants:")
        for invariant in invariants { lines.append("  " + (invariant.passed ? "PASS  " : "FAIL  ") + invariant.text) }
        lines.append("result: " + (passed ? "PASS" : "FAIL") + " (seed \(settings.seed))")
        return lines.joined(separator: "\n")
    }

    /// Minimum, maximum and least-squares slope of the RSS and the heap after the warm-up.
    private var trendLine: String? {
        let points = samples.trend
        guard points.count >= 2, let low = points.map(\.rssKiB).min(), let high = points.map(\.rssKiB).max() else { return nil }
        return "after warm-up (\(points.count) samples): RSS min \(ProcessSample.mebibytes(low)), max \(ProcessSample.mebibytes(high)), "
            + "trend \(slope(points.map { ($0.minutes, $0.rssKiB) })); heap in use trend \(slope(points.map { ($0.minutes, $0.heapKiB) }))"
    }

    /// The least-squares slope of KiB over minutes, in MiB per minute.
    private func slope(_ points: [(Double, Int)]) -> String {
        let n = Double(points.count)
        let meanX = points.map(\.0).reduce(0, +) / n
        let meanY = points.map { Double($0.1) }.reduce(0, +) / n
        let covariance = points.reduce(0) { $0 + ($1.0 - meanX) * (Double($1.1) - meanY) }
        let variance = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        return String(format: "%+.2f MiB/min", variance > 0 ? covariance / variance / 1024 : 0)
    }

    private func seconds(_ duration: Duration) -> String {
        let value = duration / .seconds(1)
        return String(format: "%.1f s", value)
    }

    private func milliseconds(_ duration: Duration) -> String {
        let value = duration / .milliseconds(1)
        return String(format: "%.0f ms", value)
    }

    private func signed(_ kib: Int) -> String {
        (kib >= 0 ? "+" : "-") + ProcessSample.mebibytes(abs(kib))
    }

    private func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        guard text.count < width else { return text + " " }
        let fill = String(repeating: " ", count: width - text.count)
        return right ? fill + text : text + fill
    }
}
