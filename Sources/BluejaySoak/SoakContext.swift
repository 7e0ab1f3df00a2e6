/// What every part of a run shares: the counters, the notification check, the task tracker
/// and the component lifetimes.
struct SoakContext: Sendable {
    let statistics = SoakStatistics()
    let ledger = NotificationLedger()
    let tasks = TaskTracker()
    let lifetimes = LifetimeRegistry()
    let logs = LogTally.shared
    let hangs = HangMonitor()
}
