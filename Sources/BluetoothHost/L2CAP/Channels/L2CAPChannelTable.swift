import BluetoothCore
import BluetoothHCI
import Synchronization

/// A PSM server registered with ``LEHost/listen(psm:parameters:security:minimumKeySize:accept:)``.
public struct L2CAPServer: Sendable, Hashable {
    /// The SPSM peers open channels to.
    public let psm: UInt16
    public let parameters: L2CAPChannelParameters
    /// What the link must have before a channel is accepted.
    public let security: L2CAPChannelSecurity
    /// The shortest encryption key, in octets (7…16), a link needs when ``security`` asks for
    /// encryption.
    public let minimumKeySize: Int
}

/// The credit-based channels of every link, the PSM servers and the opens awaiting an answer:
/// read on the transport's reader thread (K-frames go straight to their channel) and changed
/// by the host actor.
final class L2CAPChannelTable: Sendable {
    struct Server: Sendable {
        var registration: L2CAPServer
        var accept: @Sendable (L2CAPChannel) -> Void
    }

    /// A channel request this host sent, waiting for its response.
    struct PendingOpen: Sendable {
        var channels: [L2CAPChannel]
        /// Gets the response (an LE or an enhanced credit-based connection response), or why none came.
        var complete: @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void
    }

    private struct State {
        var channels: [UInt16: [L2CAPChannelID: L2CAPChannel]] = [:]
        var servers: [UInt16: Server] = [:]
        var pendingOpens: [UInt16: [UInt8: PendingOpen]] = [:]
        /// The timers releasing closed channels whose Disconnection Response has not come.
        var releaseTimers: [UInt16: [L2CAPChannelID: Task<Void, Never>]] = [:]
    }

    private let state = Mutex(State())

    /// Dynamically allocated SPSMs (Core 6.0, Vol 3, Part A, 4.22; Assigned Numbers 5.1).
    static let dynamicPSMs: ClosedRange<UInt16> = 0x0080...0x00FF
    /// SPSMs a channel may be opened to (the fixed, SIG-assigned ones and the dynamic ones).
    static let validPSMs: ClosedRange<UInt16> = 0x0001...0x00FF

    // MARK: Channels

    func channel(connectionHandle: UInt16, localCID: L2CAPChannelID) -> L2CAPChannel? {
        state.withLock { $0.channels[connectionHandle]?[localCID] }
    }

    func channel(connectionHandle: UInt16, remoteCID: L2CAPChannelID) -> L2CAPChannel? {
        state.withLock { $0.channels[connectionHandle]?.values.first { $0.remoteCID == remoteCID } }
    }

    func channels(connectionHandle: UInt16) -> [L2CAPChannel] {
        state.withLock { Array(($0.channels[connectionHandle] ?? [:]).values) }
    }

    /// Reserves a free CID in 0x0040…0x007F (Vol 3, Part A, 2.1) and registers the channel
    /// `make` builds with it; `nil` when all 64 are in use.
    func allocate(connectionHandle: UInt16, _ make: (L2CAPChannelID) -> L2CAPChannel) -> L2CAPChannel? {
        state.withLock { state in
            let used = state.channels[connectionHandle] ?? [:]
            guard let raw = L2CAPChannelID.leDynamicRange.first(where: { used[L2CAPChannelID(rawValue: $0)] == nil }) else { return nil }
            let channel = make(L2CAPChannelID(rawValue: raw))
            state.channels[connectionHandle, default: [:]][channel.localCID] = channel
            return channel
        }
    }

    /// Releases the channel's CID (if it still holds it); returns whether it did.
    @discardableResult
    func remove(_ channel: L2CAPChannel) -> Bool {
        let (removed, timer) = state.withLock { state -> (Bool, Task<Void, Never>?) in
            guard state.channels[channel.connectionHandle]?[channel.localCID] === channel else { return (false, nil) }
            state.channels[channel.connectionHandle]?[channel.localCID] = nil
            return (true, state.releaseTimers[channel.connectionHandle]?.removeValue(forKey: channel.localCID))
        }
        timer?.cancel()
        return removed
    }

    /// Starts `timer`, which releases the closed `channel` if its Disconnection Response does
    /// not come first (``remove(_:)`` cancels it).
    func setReleaseTimer(_ timer: Task<Void, Never>, for channel: L2CAPChannel) {
        let replaced = state.withLock { state -> Task<Void, Never>? in
            guard state.channels[channel.connectionHandle]?[channel.localCID] === channel else { return timer }
            defer { state.releaseTimers[channel.connectionHandle, default: [:]][channel.localCID] = timer }
            return state.releaseTimers[channel.connectionHandle]?[channel.localCID]
        }
        replaced?.cancel()
    }

    /// The link ended: every channel on it closes with `error`, and opens waiting on it fail.
    func linkClosed(connectionHandle: UInt16, error: L2CAPChannelError) {
        let (channels, opens, timers) = state.withLock { state in
            (state.channels.removeValue(forKey: connectionHandle).map { Array($0.values) } ?? [],
             state.pendingOpens.removeValue(forKey: connectionHandle).map { Array($0.values) } ?? [],
             state.releaseTimers.removeValue(forKey: connectionHandle).map { Array($0.values) } ?? [])
        }
        timers.forEach { $0.cancel() }
        channels.forEach { $0.finish(with: error) }
        opens.forEach { $0.complete(.failure(error)) }
    }

    /// The transport closed: every channel and open fails.
    func closeAll(error: L2CAPChannelError) {
        let handles = state.withLock { Set($0.channels.keys).union($0.pendingOpens.keys) }
        handles.forEach { linkClosed(connectionHandle: $0, error: error) }
    }

    // MARK: Opens

    func addPendingOpen(_ open: PendingOpen, connectionHandle: UInt16, identifier: UInt8) {
        state.withLock { $0.pendingOpens[connectionHandle, default: [:]][identifier] = open }
    }

    func takePendingOpen(connectionHandle: UInt16, identifier: UInt8) -> PendingOpen? {
        state.withLock { $0.pendingOpens[connectionHandle]?.removeValue(forKey: identifier) }
    }

    /// The task waiting for the answer to `identifier` was cancelled: the open fails with
    /// ``L2CAPChannelError/cancelled`` now, and `late` gets what ends the request later (the
    /// peer's response, the RTX timeout or the link's end) in its place.
    func cancelPendingOpen(connectionHandle: UInt16, identifier: UInt8,
                           late: @escaping @Sendable (Result<LESignalingCommand, L2CAPChannelError>) -> Void) {
        let open = state.withLock { state -> PendingOpen? in
            guard let open = state.pendingOpens[connectionHandle]?[identifier] else { return nil }
            state.pendingOpens[connectionHandle]?[identifier] = PendingOpen(channels: open.channels, complete: late)
            return open
        }
        open?.complete(.failure(.cancelled))
    }

    // MARK: Servers

    func addServer(psm: UInt16?, parameters: L2CAPChannelParameters, security: L2CAPChannelSecurity, minimumKeySize: Int,
                   accept: @escaping @Sendable (L2CAPChannel) -> Void) throws(L2CAPChannelError) -> L2CAPServer {
        let result = state.withLock { state -> Result<L2CAPServer, L2CAPChannelError> in
            let chosen: UInt16
            if let psm {
                guard Self.validPSMs.contains(psm) else { return .failure(.invalidArgument("SPSM \(Hex.format(psm)) is outside 0x01…0xFF")) }
                guard state.servers[psm] == nil else { return .failure(.psmInUse(psm)) }
                chosen = psm
            } else {
                guard let free = Self.dynamicPSMs.first(where: { state.servers[$0] == nil }) else { return .failure(.noResources) }
                chosen = free
            }
            let server = L2CAPServer(psm: chosen, parameters: parameters, security: security, minimumKeySize: minimumKeySize)
            state.servers[chosen] = Server(registration: server, accept: accept)
            return .success(server)
        }
        return try result.get()
    }

    func removeServer(psm: UInt16) {
        state.withLock { _ = $0.servers.removeValue(forKey: psm) }
    }

    func server(psm: UInt16) -> Server? {
        state.withLock { $0.servers[psm] }
    }

    var servers: [L2CAPServer] {
        state.withLock { $0.servers.values.map(\.registration).sorted { $0.psm < $1.psm } }
    }
}
