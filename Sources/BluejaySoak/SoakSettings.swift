import Foundation

/// What a soak run does and the limits it is judged by.
struct SoakSettings: Sendable {
    /// How long the load runs (centrals operating, faults injected), before shutdown.
    var duration: Duration
    /// The seed of every random choice (printed; `SOAK_SEED` or `--seed` replays it).
    var seed: UInt64
    /// Bluejay instances, each on its own virtual controller.
    var centrals: Int
    /// Simulated peripherals (a GATT server on a host of this stack, each on its own controller).
    var peripherals: Int
    /// Simulated seconds per real second on the virtual link (``VirtualLink/Configuration/timeScale``).
    var timeScale: Double
    /// Whether the apps (each central, each peripheral) restart their stack after a Hardware
    /// Error, as they must today: the host does not initialize the controller again after
    /// it, so the reset controller's default event mask hides every LE event from it.
    /// `false` shows that (`--no-app-recovery`).
    var appRecovery = true
    /// Print the stack's warnings and errors as they are logged (they are always counted).
    var verbose: Bool

    /// The link runs ten times faster than real time by default: a 15 ms connection interval
    /// takes 1.5 ms, so an ATT round trip a few milliseconds and a run does about ten times
    /// more operations than in real time, with the CPU still mostly idle on two cores.
    /// Supervision timeouts (5 s of link time) take half a second; the hosts' own timers
    /// (operation, command and ATT transaction timeouts) stay in real time, so they are
    /// relatively longer, as on a slow host.
    static let defaultTimeScale: Double = 10

    /// The default length of a run when neither `--minutes`, `--seconds`, `SOAK_MINUTES`
    /// nor `SOAK_SECONDS` says otherwise.
    static let defaultMinutes: Double = 3
    /// The longest run accepted (a day), so that no number typed can overflow a `Duration`.
    static let maximumSeconds: Double = 86_400

    // MARK: Phases

    /// The part of the run after which memory and file descriptors are the baseline: a sixth
    /// of the run, from 3 s to 60 s (at most half of a very short run). Caches, the
    /// allocator's arenas, dispatch threads and the link's tables fill up during it; after
    /// it nothing should grow.
    var warmUp: Duration {
        let sixth = duration / 6
        return min(max(sixth, .seconds(3)), .seconds(60), duration / 2)
    }

    // MARK: Limits of the operations

    /// Bluejay's ``StartOptions/operationTimeout``: each read, write, discovery and listen
    /// set-up of a central ends within it (5 s: twenty times what one needs on an idle
    /// link, short enough that a fault costs a few seconds of a central's time).
    static let operationTimeout: TimeInterval = 5
    /// The timeout of each connection attempt (and of Bluejay's auto-reconnect).
    static let connectTimeout: TimeInterval = 4
    /// A single operation of a central that has not returned after this long is a hang: the
    /// run fails. Every wait in the stack is bounded well below it (operation timeout 5 s,
    /// supervision timeout 5 s, HCI command timeout 5 s, ATT transaction timeout 30 s).
    static let operationHangLimit: Duration = .seconds(45)
    /// Shutdown (every Bluejay stopped, every peripheral stopped, the link shut down) that
    /// has not finished after this long is a hang.
    static let shutdownLimit: Duration = .seconds(60)
    /// After shutdown, how long tasks and components get to wind down before those still
    /// alive count as leaked (they end within milliseconds when nothing is wrong).
    static let windDownLimit: Duration = .seconds(10)
    /// The whole-run watchdog: a thread of its own (not a Swift task, so a starved or
    /// deadlocked cooperative pool cannot silence it) ends the process with exit status 2
    /// and the report so far when the run is not over after the load, shutdown and
    /// wind-down limits plus this margin.
    static let watchdogMargin: Duration = .seconds(30)

    // MARK: Pace

    /// A central's pause between two operations (none to 10 ms): enough for the others
    /// to get the callback queues and the link, no more.
    static let thinkTime: ClosedRange<Int> = 0...10
    /// The pause between two injected faults, in milliseconds.
    static let faultInterval: ClosedRange<Int> = 200...1_000
    /// How often a peripheral numbers and sends a notification on its notifying characteristic.
    static let notificationInterval: Duration = .milliseconds(5)
    /// How often a peripheral sends an indication on its indicating characteristic.
    static let indicationInterval: Duration = .milliseconds(20)
    /// How long a rebooting peripheral (the controller-reset fault) stays off the air.
    static let rebootPause: ClosedRange<Int> = 100...1_500

    // MARK: Invariants

    /// The fewest numbered values that must be delivered to listening centrals (and so
    /// compared with what was sent) for the run to count: 5 per second of load. A run whose
    /// listens never get values checks nothing. It asks that values flowed, not how fast: the
    /// workload drawn from the seed decides the rate (seed 6813827389186214707 delivers 142 in
    /// the 8 s smoke, loaded or quiet; other seeds up to 1,900).
    var minimumDeliveries: Int {
        Int(duration / .seconds(1) * 5)
    }

    /// The end of the load during which every central must still complete operations and
    /// every peripheral still take connections: a quarter of the run, at least 10 s (two
    /// connection timeouts and a reboot in a row take that long).
    var livenessWindow: Duration {
        max(duration / 4, .seconds(10))
    }

    /// How much the resident set may grow from the end of the warm-up to the end of the
    /// load: 10 % of the warm-up figure, at least 8 MiB. Measured after `malloc_trim(0)`,
    /// so freed memory the allocator keeps does not count; what is left is the allocator's
    /// fragmentation and per-thread arenas, which move by a few MiB between samples. A
    /// leak of a kilobyte per operation (thousands of operations a minute) passes it
    /// within minutes.
    static func rssTolerance(warmUpKiB: Int) -> Int {
        max(8 * 1024, warmUpKiB / 10)
    }

    /// How much the heap in use (what is allocated and not freed, ``ProcessSample/heapInUseKiB``)
    /// may grow over the same span: half the warm-up figure, at least 4 MiB. It moves only
    /// with the work in flight (a few hundred KiB), so this catches a leak of 100 bytes per
    /// operation over a five-minute run, which the RSS (code pages touched late, thread
    /// stacks, fragmentation) would hide.
    static func heapTolerance(warmUpKiB: Int) -> Int {
        max(4 * 1024, warmUpKiB / 2)
    }

    // MARK: Reading the environment

    /// Settings from the options, falling back to `SOAK_MINUTES`, `SOAK_SECONDS` and
    /// `SOAK_SEED`, then to the defaults. Throws a message for a value that is not a finite
    /// number of minutes or seconds in range, or not a seed.
    static func resolve(minutes: String?, seconds: String?, seed: String?, centrals: Int, peripherals: Int,
                        timeScale: Double = defaultTimeScale, verbose: Bool,
                        environment: [String: String] = ProcessInfo.processInfo.environment) throws(SoakUsageError) -> SoakSettings {
        func nonEmpty(_ value: String?) -> String? {
            guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
            return value
        }
        let totalSeconds: Double
        if let text = nonEmpty(seconds) ?? nonEmpty(environment["SOAK_SECONDS"]) {
            totalSeconds = try parseSeconds(text, what: "seconds", scale: 1)
        } else if let text = nonEmpty(minutes) ?? nonEmpty(environment["SOAK_MINUTES"]) {
            totalSeconds = try parseSeconds(text, what: "minutes", scale: 60)
        } else {
            totalSeconds = defaultMinutes * 60
        }
        let resolvedSeed: UInt64
        if let text = nonEmpty(seed) ?? nonEmpty(environment["SOAK_SEED"]) {
            guard let value = UInt64(text) ?? (text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : nil) else {
                throw SoakUsageError("the seed \"\(text)\" is not a number from 0 to \(UInt64.max)")
            }
            resolvedSeed = value
        } else {
            resolvedSeed = UInt64.random(in: 0...UInt64.max)
        }
        guard (1...8).contains(centrals) else { throw SoakUsageError("--centrals must be from 1 to 8") }
        guard (1...8).contains(peripherals) else { throw SoakUsageError("--peripherals must be from 1 to 8") }
        guard timeScale.isFinite, (1...20).contains(timeScale) else { throw SoakUsageError("--time-scale must be from 1 to 20") }
        return SoakSettings(duration: .milliseconds(Int64((totalSeconds * 1000).rounded())), seed: resolvedSeed,
                            centrals: centrals, peripherals: peripherals, timeScale: timeScale, verbose: verbose)
    }

    private static func parseSeconds(_ text: String, what: String, scale: Double) throws(SoakUsageError) -> Double {
        guard let value = Double(text), value.isFinite, value > 0, value * scale <= maximumSeconds else {
            throw SoakUsageError("\(what) must be a number above 0 and at most a day, not \"\(text)\"")
        }
        return max(1, value * scale)
    }
}

/// A setting that cannot be used; the message says which and why.
struct SoakUsageError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
