import BluetoothTransport
import Foundation
import Synchronization

/// A bare HCI connection for tests that talk to a controller packet by packet, below the
/// HCI layer: opens a transport with `SystemTransports`, records every packet the controller
/// sends, and waits for the one a test expects.
final class HCIProbe: Sendable {
    let transport: any HCITransport
    private let box = Box()

    private struct State {
        var packets: [H4Packet] = []
        var taken = 0
        var closed: TransportError?
        var isClosed = false
    }

    /// Shared with the transport's receiver, which must not keep the probe alive.
    private final class Box: Sendable {
        let state = Mutex(State())
    }

    /// Opens and starts the transport `specification` names (`tcp:127.0.0.1:PORT`).
    init(_ specification: String) throws {
        transport = try SystemTransports.open(specification)
        transport.start { [box] event in
            box.state.withLock { state in
                switch event {
                case let .packets(packets): state.packets.append(contentsOf: packets)
                case let .closed(error):
                    state.isClosed = true
                    state.closed = error
                }
            }
        }
    }

    /// Writes one packet.
    func send(_ indicator: HCIPacketIndicator, _ bytes: [UInt8]) throws {
        try transport.send(H4Packet(indicator, bytes))
    }

    /// Waits for the next packet (after those an earlier wait returned or skipped) for which
    /// `predicate` is true; the packets before it are skipped. Returns `nil` on timeout or
    /// when the transport closes.
    func waitForPacket(timeout: Duration = .seconds(5), where predicate: (H4Packet) -> Bool) async throws -> H4Packet? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let (candidates, isClosed) = box.state.withLock { state -> ([H4Packet], Bool) in
                let candidates = Array(state.packets[state.taken...])
                return (candidates, state.isClosed)
            }
            if let index = candidates.firstIndex(where: predicate) {
                box.state.withLock { $0.taken += index + 1 }
                return candidates[index]
            }
            box.state.withLock { $0.taken += candidates.count }
            if isClosed || ContinuousClock.now >= deadline { return nil }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Every packet received so far, for failure messages.
    var received: [H4Packet] { box.state.withLock { $0.packets } }

    func close() {
        transport.close()
    }
}
