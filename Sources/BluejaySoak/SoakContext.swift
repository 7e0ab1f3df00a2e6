/// What every part of a run shares: the counters, the delivery audit, the task tracker and the
/// component lifetimes.
struct SoakContext: Sendable {
    let statistics = SoakStatistics()
    let audit = DeliveryAudit()
    let tasks = TaskTracker()
    let lifetimes = LifetimeRegistry()
    let logs = LogTally.shared
    let hangs = HangMonitor()
}
