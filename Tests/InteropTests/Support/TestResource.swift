import Bluejay
import BluetoothVirtual
import Dispatch

/// Something a test starts and must end: a child process, a served controller, a Bluejay.
/// ``shutdown()`` ends it without blocking a thread of the cooperative pool (a child process
/// may take seconds to exit), so tests never stop one from a `defer`.
protocol TestResource: Sendable {
    func shutdown() async
}

/// Runs `body` with `resource`, then awaits the resource's shutdown, whether `body` returned
/// or threw.
func using<Resource: TestResource, T>(
    _ resource: Resource,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (Resource) async throws -> T
) async throws -> T {
    do {
        let result = try await body(resource)
        await resource.shutdown()
        return result
    } catch {
        await resource.shutdown()
        throw error
    }
}

extension BumbleRig: TestResource {}
extension Rootcanal: TestResource {}
extension CLIProcess: TestResource {}
extension ChildProcess: TestResource {}

extension Bluejay: TestResource {
    func shutdown() async { await stop() }
}

extension VirtualControllerServer: TestResource {
    /// ``stop()`` (which waits for its accept loop) on a thread of its own.
    func shutdown() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                self.stop()
                continuation.resume()
            }
        }
    }
}
