import Testing

/// Every suite that starts a Python process (the Bumble peer, a Bumble host, the CLI against
/// them) is nested here, so that they run one test at a time: `.serialized` on a parent suite
/// applies to every suite inside it, while the unit suites of the other targets still run in
/// parallel. Several Bumble rigs at once would load the machine that the tests measure.
/// Each test has at most 3 minutes (a hang guard; none comes near it).
@Suite("Interop with Bumble and the CLI, one test at a time", .serialized, .timeLimit(.minutes(3)))
enum InteropSuites {}

/// The Linux guest's suites (QEMU, with a Bumble rig of their own) run one test at a time here,
/// beside ``InteropSuites`` rather than inside it: QEMU's software emulation keeps one core
/// busy while a Bumble test mostly waits on its peer, so the two lines of tests share the
/// machine's two cores, and `make test` takes the longer line's time rather than their sum
/// (about 400 s each on a slow machine, docs/TESTING.md). One guest at a time: both boot the
/// same image, and a second QEMU would take the core the Bumble tests run on.
@Suite("The Linux guest, one test at a time", .serialized, .timeLimit(.minutes(3)))
enum GuestSuites {}
