import Foundation
import Synchronization
import Testing

/// The controllers under an interop test: the rig's Bumble devices and our host each get one.
/// Tests of what a user does run on both, with the same assertions (`arguments: InteropController.allCases`);
/// what one controller does differently is named where a test allows for it.
enum InteropController: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// Bumble's virtual controllers on one `LocalLink` in the rig's process, controller A
    /// served to our host, with the rig's patches (`peer.py`, "Rig facts" in its README).
    case bumble
    /// Google's Rootcanal: a controller per device on one simulated radio, with a real link
    /// layer (timing, encryption, PHY, data length) and strict HCI checks (``Rootcanal``).
    case rootcanal

    var testDescription: String {
        switch self {
        case .bumble: "on Bumble's controller"
        case .rootcanal: "on Rootcanal"
        }
    }
}

/// One Rootcanal for the tests of a suite (``Trait/sharedRootcanal``): started by the first test
/// that runs on it, ended with the suite. A test finds it started again if it has died. The
/// interop suites run one test at a time (``InteropSuites``), and so do the calls here.
final class SharedRootcanal: Sendable {
    /// The suite's, inside a suite marked ``Trait/sharedRootcanal``.
    @TaskLocal static var current: SharedRootcanal?

    private let running = Mutex<Rootcanal?>(nil)

    /// The running Rootcanal, started now if there is none or it has ended.
    func instance() async throws -> Rootcanal {
        if let rootcanal = running.withLock({ $0 }), !rootcanal.hasEnded { return rootcanal }
        let fresh = try await Rootcanal.start()
        let previous = running.withLock { running in
            defer { running = fresh }
            return running
        }
        await previous?.shutdown()
        return fresh
    }

    func shutdown() async {
        let rootcanal = running.withLock { running in
            defer { running = nil }
            return running
        }
        await rootcanal?.shutdown()
    }
}

/// Gives a suite one Rootcanal for all its tests (see ``SharedRootcanal``), ended when the
/// suite ends, also when it fails.
struct SharedRootcanalTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        let shared = SharedRootcanal()
        do {
            try await SharedRootcanal.$current.withValue(shared) { try await function() }
        } catch {
            await shared.shutdown()
            throw error
        }
        await shared.shutdown()
    }
}

extension Trait where Self == SharedRootcanalTrait {
    /// One Rootcanal for the suite's tests, started when the first one needs it.
    static var sharedRootcanal: Self { Self() }
}

/// Runs `body` with the command-line arguments that put a rig script's devices on
/// `controller`: none for Bumble's; on Rootcanal `--controller rootcanal --hci-port P`, with
/// the suite's shared Rootcanal or, outside such a suite, one started for `body` alone. When
/// `body` fails on Rootcanal, the end of Rootcanal's log goes to stderr with the error.
func withRigController<T>(
    _ controller: InteropController,
    isolation: isolated (any Actor)? = #isolation,
    _ body: ([String]) async throws -> T
) async throws -> T {
    switch controller {
    case .bumble:
        return try await body([])
    case .rootcanal:
        func run(_ rootcanal: Rootcanal) async throws -> T {
            do {
                return try await body(["--controller", "rootcanal", "--hci-port", String(rootcanal.hciPort)])
            } catch {
                FileHandle.standardError.write(Data("Failed on Rootcanal: \(error)\n\(rootcanal.diagnostics)\n".utf8))
                throw error
            }
        }
        if let shared = SharedRootcanal.current {
            return try await run(try await shared.instance())
        }
        return try await using(try await Rootcanal.start()) { rootcanal in try await run(rootcanal) }
    }
}
