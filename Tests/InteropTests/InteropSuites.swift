import Testing

/// Every suite that starts a Python process (the Bumble peer, a Bumble host, the CLI against
/// them) is nested here, so that they run one test at a time: `.serialized` on a parent suite
/// applies to every suite inside it, while the unit suites of the other targets still run in
/// parallel. Several Bumble rigs at once would load the machine that the tests measure.
/// Each test has at most 3 minutes (a hang guard; none comes near it).
@Suite("Interop with Bumble and the CLI, one test at a time", .serialized, .timeLimit(.minutes(3)))
enum InteropSuites {}
