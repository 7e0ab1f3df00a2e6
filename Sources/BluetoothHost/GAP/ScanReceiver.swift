import BluetoothCore
import BluetoothHCI
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

    private struct Delivery {
        var handler: (@Sendable ([Advertisement]) -> Void)?
        var onEnd: (@Sendable (HostError?) -> Void)?
    }

    init(id: UInt64, options: ScanOptions, handler: @escaping @Sendable ([Advertisement]) -> Void,
         onEnd: @escaping @Sendable (HostError?) -> Void) {
        self.id = id
        assembler = Mutex(AdvertisementAssembler(options: options))
        delivery = Mutex(Delivery(handler: handler, onEnd: onEnd))
    }

    /// Assembles a legacy advertising report event into `advertisements`.
    func assemble(_ event: LEAdvertisingReportEvent, at time: ContinuousClock.Instant, into advertisements: inout [Advertisement]) {
        assembler.withLock { assembler in
            for report in event.reports {
                if let advertisement = assembler.receive(report, at: time) { advertisements.append(advertisement) }
            }
        }
    }

    /// Assembles an extended advertising report event into `advertisements`.
    func assemble(_ event: LEExtendedAdvertisingReportEvent, at time: ContinuousClock.Instant, into advertisements: inout [Advertisement]) {
        assembler.withLock { assembler in
            for report in event.reports {
                if let advertisement = assembler.receive(report, at: time) { advertisements.append(advertisement) }
            }
        }
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
