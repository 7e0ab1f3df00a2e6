import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Dispatch
import Synchronization

/// A controller stand-in for the ACL path: it takes every ACL packet at once and, on its own
/// queue (never inside `send`, as ``HCITransport`` requires), answers each with a Number Of
/// Completed Packets event for it, as a controller whose radio never waits would.
public final class CompletingTransport: HCITransport {
    public let name = "bench:completing"
    private let queue = DispatchQueue(label: "bluejay.bench.completing-transport")
    private let state = Mutex(State())

    private struct State {
        var receiver: (@Sendable (TransportEvent) -> Void)?
        var completed = 0
        var target = Int.max
        var waiter: CheckedContinuation<Void, Never>?
    }

    public init() {}

    public func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        state.withLock { $0.receiver = receiver }
    }

    public func send(_ packet: H4Packet) throws(TransportError) {
        guard packet.indicator == .acl, packet.bytes.count >= 2 else { return }
        // Number Of Completed Packets: one handle, one packet.
        let event: [UInt8] = [0x13, 0x05, 0x01, packet.bytes.first ?? 0, packet.bytes.dropFirst().first ?? 0 & 0x0F, 0x01, 0x00]
        queue.async { [self] in
            let receiver = state.withLock { $0.receiver }
            receiver?(.packets([H4Packet(.event, event)]))
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.completed += 1
                guard state.completed >= state.target, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
    }

    public func close() {
        let receiver = state.withLock { $0.receiver }
        queue.async { receiver?(.closed(nil)) }
    }

    /// Packets completed so far.
    public var completedCount: Int { state.withLock { $0.completed } }

    /// Returns once `count` packets in all have been completed (and their event handled).
    public func waitForCompleted(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.completed >= count { return true }
                state.target = count
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// `HCIController.sendACL` against a ``CompletingTransport``: L2CAP PDUs in, ACL packets out
/// under the controller's buffer credits, each credit given back by Number Of Completed Packets.
public final class ACLPathBench: Sendable {
    public let transport = CompletingTransport()
    public let controller: HCIController
    public let bufferSize: Int
    public let bufferCount: Int

    public init(bufferSize: Int = 27, bufferCount: Int = 8) {
        self.bufferSize = bufferSize
        self.bufferCount = bufferCount
        controller = HCIController(transport: transport, logger: quietLogger("bluejay.bench.hci"))
        controller.start()
        controller.configureACLBuffers(dataLength: bufferSize, count: bufferCount)
    }

    /// Sends the PDUs and returns once every fragment was written and completed.
    /// Returns the number of ACL packets.
    public func send(_ pdus: [[UInt8]]) async -> Int {
        let start = transport.completedCount
        var fragments = 0
        for pdu in pdus {
            fragments += max(1, (pdu.count + bufferSize - 1) / bufferSize)
            controller.sendACL(connectionHandle: Corpus.connectionHandle, pdu: pdu, completion: nil)
        }
        await transport.waitForCompleted(start + fragments)
        return fragments
    }

    /// The PDUs of the ACL path benchmarks: `count` copies of a PDU of `size` octets
    /// (basic header included, on the ATT channel).
    public static func pdus(size: Int, count: Int) -> [[UInt8]] {
        let payload = size - 4
        let pdu = [UInt8(payload & 0xFF), UInt8(payload >> 8), 0x04, 0x00] + (0..<payload).map { UInt8(truncatingIfNeeded: $0) }
        return Array(repeating: pdu, count: count)
    }
}
