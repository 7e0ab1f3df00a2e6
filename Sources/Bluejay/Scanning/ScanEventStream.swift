/// The `async` API's side of a scan: the stream of its events, and the session callbacks
/// that feed it. A consumer that stops iterating stops the scan.
struct ScanEventStream {
    /// How many events the stream holds for a consumer that falls behind; the newest are
    /// dropped past it (the scan reports again what it keeps hearing).
    static let bufferLimit = 16_384

    let stream: ValueStream<ScanEvent>
    let continuation: ValueStream<ScanEvent>.Continuation

    init() {
        (stream, continuation) = ValueStream.makeStream(of: ScanEvent.self, limit: Self.bufferLimit)
    }

    /// How the session reports: into the stream.
    var reporting: ScanSession.Reporting { .stream(continuation) }

    /// The session's `stopped`: the stream ends, with the scan's error if it failed.
    var stopped: @Sendable ([ScanDiscovery], BluejayError?) -> Void {
        { [continuation] _, error in continuation.finish(throwing: error) }
    }
}
