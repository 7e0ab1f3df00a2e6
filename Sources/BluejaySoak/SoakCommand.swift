import ArgumentParser
import Foundation

/// `bluejay-soak` (`make soak`): several Bluejay centrals and simulated peripherals on one
/// in-process virtual radio, thousands of mixed operations and random faults, then a report
/// and a verdict on the invariants.
///
/// A program of its own rather than a `bluejay` subcommand: it judges the process it runs
/// in (resident memory, file descriptors, tasks left after shutdown), so nothing else may
/// run there, and the user's CLI stays free of test machinery.
@main
struct SoakCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluejay-soak",
        abstract: "Soak Bluejay on the virtual radio: centrals, peripherals, mixed operations, random faults.",
        discussion: """
        Exits with 0 when every invariant held (the report lists them: every numbered value sent \
        to a listening central arrived once and in order, unless a link break explains its \
        loss, and enough of them were compared; no listen's stream failed but with its link; every value read \
        back one that was written, no \
        operation hung, every central and peripheral still working at the end, no growth of \
        RSS or heap beyond the tolerances after warm-up, no file descriptor opened after it, \
        no task or component alive after shutdown), 1 when one failed, 2 when the watchdog \
        ended a run that did not finish. The seed is printed; the same seed makes the same \
        choices (operations, values, faults, timings) for each central, peripheral and the \
        fault injector, though not the same interleaving of their work.
        """
    )

    @Option(help: "Minutes of load (default: SOAK_MINUTES, else 3).")
    var minutes: String?

    @Option(help: "Seconds of load, instead of minutes (default: SOAK_SECONDS).")
    var seconds: String?

    @Option(help: "The seed of every random choice (default: SOAK_SEED, else a random one).")
    var seed: String?

    @Option(help: "Bluejay centrals, each on its own virtual controller (1 to 8).")
    var centrals = 4

    @Option(help: "Simulated peripherals (1 to 8).")
    var peripherals = 3

    @Option(help: "Simulated seconds per real second on the virtual link (1 to 20).")
    var timeScale = SoakSettings.defaultTimeScale

    @Flag(help: "Centrals and peripherals do not restart their stack after a Hardware Error (shows the host's lack of recovery).")
    var noAppRecovery = false

    @Flag(help: "Print the stack's warnings and errors as they are logged.")
    var verbose = false

    mutating func run() async throws {
        var settings: SoakSettings
        do {
            settings = try SoakSettings.resolve(minutes: minutes, seconds: seconds, seed: seed, centrals: centrals,
                                                peripherals: peripherals, timeScale: timeScale, verbose: verbose)
        } catch {
            throw ValidationError(error.description)
        }
        settings.appRecovery = !noAppRecovery
        LogTally.bootstrap(verbose: settings.verbose)
        print("bluejay-soak: seed \(settings.seed); \(settings.centrals) centrals and \(settings.peripherals) peripherals "
            + "for \(settings.duration), link time ×\(settings.timeScale) (replay with SOAK_SEED=\(settings.seed))")
        let report = await SoakRun(settings: settings).run()
        print(report.text)
        if !report.passed { throw ExitCode(1) }
    }
}
