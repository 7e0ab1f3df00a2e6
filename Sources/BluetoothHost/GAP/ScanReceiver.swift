import BluetoothCore
import BluetoothHCI
import Logging
import Synchronization

/// The receiving end of the running scan, on the transport's reader thread: the
/// ``L2CAPRouter`` hands it the advertising reports of each batch, it assembles them into
/// ``Advertisement``s and hands the scan's handler what the batch produced, once.
///
/// After ``finish(_:)`` the handler is never called again: delivery and finishing take the
/// same lock, so a batch being delivered completes before the scan is reported ended.
final class ScanReceiver: Sendable {
    let id: UInt64
    private let assembler: Mutex<AdvertisementAssembler>
    private let delivery: Mutex<Delivery>
    private let logger: Logger
    private let resolver: AddressResolver?

    private struct Delivery {
        var handler: (@Sendable ([Advertisement]) -> Void)?
        var onEnd: (@Sendable (HostError?) -> Void)?
    }

    init(id: UInt64, options: ScanOptions, logger: Logger, resolver: AddressResolver? = nil, handler: @escaping @Sendable ([Advertisement]) -> Void,
         onEnd: @escaping @Sendable (HostError?) -> Void) {
        self.id = id
        self.logger = logger
        self.resolver = resolver
        assembler = Mutex(AdvertisementAssembler(options: options))
        delivery = Mutex(Delivery(handler: handler, onEnd: onEnd))
    }

    /// Assembles a legacy advertising report event into `advertisements`.
    func assemble(_ event: LEAdvertisingReportEvent, at time: ContinuousClock.Instant, into advertisements: inout [Advertisement]) {
        assembler.withLock { assembler in
            let evicted = assembler.evictedPeers
            for report in event.reports {
                resolver?.noteSighting(report.advertiser)
                if let advertisement = assembler.receive(report, at: time), let resolved = resolved(advertisement) {
                    advertisements.append(resolved)
                }
            }
            warnOnFirstEviction(before: evicted, after: assembler.evictedPeers, limit: assembler.options.peerLimit)
        }
    }

    /// Assembles an extended advertising report event into `advertisements`.
    func assemble(_ event: LEExtendedAdvertisingReportEvent, at time: ContinuousClock.Instant, into advertisements: inout [Advertisement]) {
        assembler.withLock { assembler in
            let evicted = assembler.evictedPeers
            for report in event.reports {
                if let advertiser = report.advertiser { resolver?.noteSighting(advertiser) }
                if let advertisement = assembler.receive(report, at: time), let resolved = resolved(advertisement) {
                    advertisements.append(resolved)
                }
            }
            warnOnFirstEviction(before: evicted, after: assembler.evictedPeers, limit: assembler.options.peerLimit)
        }
    }

    /// The advertisement with its advertiser's identity, when a bond's IRK resolves its address
    /// (or the controller resolved it); `nil` for a bonded peer's identity address that network
    /// privacy mode ignores.
    private func resolved(_ advertisement: Advertisement) -> Advertisement? {
        guard let resolver else { return advertisement }
        if resolver.ignores(advertisement.peer) { return nil }
        guard let identity = resolver.identity(of: advertisement.peer) else { return advertisement }
        var resolved = advertisement
        resolved.identity = identity
        return resolved
    }

    /// What the assembler forgot or gave up, for the log at the end of the scan.
    var statistics: String {
        assembler.withLock { assembler in
            "\(assembler.peerCount) peer(s) tracked, \(assembler.evictedPeers) forgotten past the limit of \(assembler.options.peerLimit), "
                + "\(assembler.expiredPeers) after \(assembler.options.peerTimeout) unheard, \(assembler.droppedChains) extended advertisement(s) given up"
        }
    }

    /// Says once per scan that the peer table is full (each eviction is counted, not logged).
    private func warnOnFirstEviction(before: Int, after: Int, limit: Int) {
        guard before == 0, after > 0 else { return }
        logger.warning("the scan hears more than \(limit) peers: the least recently heard are forgotten (and reported again if heard again)")
    }

    /// Hands the handler one batch's advertisements, unless the scan has ended.
    func deliver(_ advertisements: [Advertisement]) {
        guard !advertisements.isEmpty else { return }
        delivery.withLock { delivery in delivery.handler?(advertisements) }
    }

    /// Ends the scan: `nil` when it was stopped, else why it failed. Only the first call counts.
    func finish(_ error: HostError?) {
        delivery.withLock { delivery in
            let onEnd = delivery.onEnd
            delivery = Delivery()
            onEnd?(error)
        }
    }
}
