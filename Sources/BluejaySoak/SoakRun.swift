import Bluejay
import BluetoothVirtual
import Foundation

/// One soak run: builds the world on a fresh virtual link, runs the load and the faults,
/// shuts everything down, and measures what is left.
struct SoakRun: Sendable {
    let settings: SoakSettings
    let context = SoakContext()

    /// Runs and returns the report (the caller prints it and exits with its status).
    func run() async -> SoakReport {
        var report = SoakReport(settings: settings)
        report.samples.start = ProcessProbe.sample()
        let progress = ReportProgress(report)
        let watchdog = Watchdog(after: settings.duration + SoakSettings.shutdownLimit + SoakSettings.windDownLimit + SoakSettings.watchdogMargin) {
            [context] in
            var partial = progress.current
            partial.capture(context)
            partial.watchdogFired = true
            print(partial.text)
        }
        defer { watchdog.disarm() }
        let monitor = context.tasks.spawn("hang monitor") { [context] in await context.hangs.run() }
        // The world lives in load(): once it returns, only tasks and the stack's own
        // references can keep any of it alive.
        report = await load(report, progress: progress)
        monitor.cancel()
        await monitor.value
        return await windDown(report)
    }

    /// Builds the world, runs the load and the faults, shuts the world down.
    private func load(_ report: SoakReport, progress: ReportProgress) async -> SoakReport {
        var report = report
        let clock = ContinuousClock()
        let began = clock.now

        // The world.
        let link = VirtualLink(configuration: VirtualLink.Configuration(timeScale: settings.timeScale, seed: settings.seed))
        context.lifetimes.track(link, as: "VirtualLink")
        let peripherals = (0..<settings.peripherals).map {
            SoakPeripheral(index: $0, link: link, centrals: settings.centrals, seed: settings.seed, appRecovery: settings.appRecovery,
                           context: context)
        }
        let centrals = (0..<settings.centrals).map {
            SoakCentral(index: $0, of: settings.centrals, link: link, peripherals: peripherals, seed: settings.seed,
                        appRecovery: settings.appRecovery, context: context)
        }
        do {
            for peripheral in peripherals { try await peripheral.start() }
            for central in centrals { try await central.start() }
        } catch {
            report.setupFailure = "\(error)"
        }

        // The load.
        let deadline = began + settings.duration
        if report.setupFailure == nil {
            let sampler = context.tasks.spawn("sampler") { [settings] in
                await Self.sample(warmUpAt: began + settings.warmUp, until: deadline, into: progress)
            }
            let loops = centrals.map { central in context.tasks.spawn("\(central.name) loop") { await central.run(until: deadline) } }
            let injector = FaultInjector(centrals: centrals, peripherals: peripherals, context: context, seed: settings.seed)
            let faults = context.tasks.spawn("fault injector") { await injector.run(until: deadline) }
            let sweeper = context.tasks.spawn("delivery audit sweeper") { [context] in await Self.sweep(context.audit, until: deadline) }
            for loop in loops { await loop.value }
            await faults.value
            await sampler.value
            await sweeper.value
        }
        report.loadTime = clock.now - began
        let livenessStart = deadline - settings.livenessWindow
        report.idleCentrals = centrals.filter { ($0.lastSuccess ?? began) < livenessStart }.map(\.name)
        report.idlePeripherals = peripherals.filter { ($0.lastConnection ?? began) < livenessStart }.map(\.name)
        report.samples.warmUp = progress.current.samples.warmUp
        report.samples.trend = progress.current.samples.trend
        report.samples.endOfLoad = ProcessProbe.sample()
        progress.update { $0 = report }

        // Shutdown, under its own limit. The listens end with it: what is sent from now on is not required.
        let shutdownBegan = clock.now
        for central in centrals { context.audit.listensEnded(central: central.index, stream: nil, at: shutdownBegan) }
        let shutdown = await OperationGuard.run("shutdown", limit: SoakSettings.shutdownLimit, tasks: context.tasks, monitor: context.hangs) {
            for central in centrals { await central.stop() }
            for peripheral in peripherals { await peripheral.stop() }
            link.shutdown()
        }
        report.shutdownTime = clock.now - shutdownBegan
        if case .hung = shutdown { report.shutdownHung = true }
        return report
    }

    /// Waits (at most ``SoakSettings/windDownLimit``) for tasks and components to end, and
    /// measures. Nothing signals the last deallocation, so it looks every 50 ms.
    private func windDown(_ report: SoakReport) async -> SoakReport {
        var report = report
        let limit = ContinuousClock.now + SoakSettings.windDownLimit
        while ContinuousClock.now < limit, context.tasks.aliveCount > 0 || !context.lifetimes.aliveCounts.isEmpty {
            try? await Task.sleep(for: .milliseconds(50))
        }
        report.samples.afterShutdown = ProcessProbe.sample()
        context.audit.finish()
        report.capture(context)
        return report
    }

    /// Settles the delivery audit's old values every second, so that it keeps only the last few
    /// seconds of them.
    private static func sweep(_ audit: DeliveryAudit, until deadline: ContinuousClock.Instant) async {
        while ContinuousClock.now < deadline {
            do {
                try await Task.sleep(for: min(.seconds(1), deadline - ContinuousClock.now))
            } catch {
                return
            }
            audit.sweep(now: .now)
        }
    }

    /// Samples the process every few seconds: once at the end of the warm-up (the
    /// baseline), then for the trend.
    private static func sample(warmUpAt warmUp: ContinuousClock.Instant, until deadline: ContinuousClock.Instant,
                               into progress: ReportProgress) async {
        do {
            try await Task.sleep(until: warmUp)
        } catch {
            return
        }
        let baseline = ProcessProbe.sample()
        progress.update { $0.samples.warmUp = baseline }
        let began = ContinuousClock.now
        while ContinuousClock.now < deadline {
            do {
                try await Task.sleep(for: min(SoakReport.trendInterval, deadline - ContinuousClock.now))
            } catch {
                return
            }
            let sample = ProcessProbe.sample()
            let minutes = (ContinuousClock.now - began) / .seconds(60)
            progress.update { $0.samples.trend.append((minutes, sample.rssKiB, sample.heapInUseKiB ?? 0)) }
        }
    }
}
