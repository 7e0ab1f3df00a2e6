import Synchronization

/// The report as far as the run got, for the watchdog to print if the run never ends.
final class ReportProgress: Sendable {
    private let report: Mutex<SoakReport>

    init(_ report: SoakReport) {
        self.report = Mutex(report)
    }

    var current: SoakReport { report.withLock { $0 } }

    func update(_ change: (inout SoakReport) -> Void) {
        report.withLock { change(&$0) }
    }
}
