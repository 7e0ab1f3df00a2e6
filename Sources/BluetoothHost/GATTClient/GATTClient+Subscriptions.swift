import BluetoothCore
import Logging
import Synchronization

extension GATTClient {
    /// How many values a subscriber's stream holds for a consumer that falls behind. A
    /// notification has no flow control (Core 6.0, Vol 3, Part F, 3.4.7.1), so a stream stays
    /// bounded by dropping the newest values past this, with a warning, rather than letting
    /// memory grow or stalling the link for every other consumer.
    public static let subscriberBufferLimit = 16_384

    /// Subscribes to a characteristic's notifications (or indications, when it only
    /// indicates or `preferIndications` is set) by writing its Client Characteristic
    /// Configuration descriptor (Core 6.0, Vol 3, Part G, 4.10 and 4.11).
    ///
    /// Returns the values in the order the peer sent them. Several subscribers may share a
    /// characteristic; the descriptor is written for the first and cleared after the last.
    /// The stream ends when its consumer stops, after ``unsubscribe(from:)``, or with an
    /// error when the connection drops. It holds at most ``subscriberBufferLimit`` values.
    ///
    /// - Parameters:
    ///   - characteristic: a characteristic that notifies or indicates.
    ///   - preferIndications: subscribe to indications when the characteristic offers both.
    ///   - clientConfigurationHandle: the descriptor's handle if known; otherwise the
    ///     characteristic's descriptors are discovered to find it.
    public func subscribe(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16? = nil,
                          preferIndications: Bool = false) async throws -> ValueStream<[UInt8]> {
        let (stream, continuation) = ValueStream.makeStream(of: [UInt8].self, limit: Self.subscriberBufferLimit)
        let overflow = OverflowWarning(logger: logger, what: "subscriber of \(characteristic.uuid)")
        let sink = NotificationSink(deliver: { values in
            // One handoff for the batch: the one copy out of the receive buffer is here.
            if case .dropped = continuation.yield(contentsOf: values.map { Array($0.value) }) { overflow.record() }
        }, finish: { error in
            continuation.finish(throwing: error)
        })
        let subscription = try await subscribe(to: characteristic, sink: sink, clientConfigurationHandle: clientConfigurationHandle,
                                               preferIndications: preferIndications)
        continuation.onTermination = { subscription.cancel() }
        return stream
    }

    /// Subscribes like ``subscribe(to:clientConfigurationHandle:preferIndications:)``, with
    /// the values handed to `handler` on the transport's reader thread, once per transport
    /// batch, in order, as slices of the receive buffer: the cheapest path from the radio to
    /// an app. `handler` must not block; copy what it keeps. ``GATTNotificationSubscription/cancel()``
    /// ends it; `ended` runs once when it ends (with the error when the connection dropped).
    public func subscribe(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16? = nil, preferIndications: Bool = false,
                          ended: @escaping @Sendable (HostError?) -> Void = { _ in },
                          handler: @escaping @Sendable ([GATTValue]) -> Void) async throws -> GATTNotificationSubscription {
        try await subscribe(to: characteristic, sink: NotificationSink(deliver: handler, finish: ended),
                            clientConfigurationHandle: clientConfigurationHandle, preferIndications: preferIndications)
    }

    private func subscribe(to characteristic: GATTCharacteristic, sink: NotificationSink, clientConfigurationHandle: UInt16?,
                           preferIndications: Bool) async throws -> GATTNotificationSubscription {
        if let closedError { throw closedError }
        let configuration: ClientCharacteristicConfiguration
        switch (characteristic.properties.contains(.notify), characteristic.properties.contains(.indicate)) {
        case (true, true): configuration = preferIndications ? .indication : .notification
        case (true, false): configuration = .notification
        case (false, true): configuration = .indication
        case (false, false): throw HostError.unsupported("characteristic \(characteristic.uuid) neither notifies nor indicates")
        }
        let valueHandle = characteristic.valueHandle
        let cccd: UInt16
        if let clientConfigurationHandle {
            cccd = clientConfigurationHandle
        } else if let known = state.withLock({ $0.subscriptionConfigurations[valueHandle]?.descriptorHandle }) {
            cccd = known
        } else {
            let descriptors = try await discoverDescriptors(of: characteristic)
            guard let found = descriptors.first(where: { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }) else {
                throw HostError.notFound("Client Characteristic Configuration descriptor of \(characteristic.uuid)")
            }
            cccd = found.handle
        }

        // Registered before the descriptor is written: the first value may follow at once.
        try bearer.addSubscriber(sink, valueHandle: valueHandle)
        do {
            // One subscriber at a time checks and writes the descriptor: others arriving while
            // it is written wait, then find it written instead of writing it again.
            try await subscriptionGate.enter()
            defer { subscriptionGate.leave() }
            try await reconcileConfiguration(valueHandle: valueHandle, descriptorHandle: cccd, wanted: configuration)
        } catch {
            let error = HostError.wrap(error)
            let left = bearer.removeSubscriber(sink, valueHandle: valueHandle)
            sink.finish(error)
            // A write given up (cancelled, past its deadline) may still take effect at the peer.
            if left == 0 { clearConfigurationInBackground(valueHandle: valueHandle) }
            throw error
        }
        return GATTNotificationSubscription(client: self, sink: sink, valueHandle: valueHandle)
    }

    /// Ends every subscription to the characteristic and clears its Client Characteristic
    /// Configuration descriptor.
    public func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        let valueHandle = characteristic.valueHandle
        for sink in bearer.removeSubscribers(valueHandle: valueHandle) { sink.finish(nil) }
        // After any write under way: then the descriptor's state is known.
        try await subscriptionGate.enter()
        defer { subscriptionGate.leave() }
        guard let descriptorHandle = state.withLock({ $0.subscriptionConfigurations[valueHandle]?.descriptorHandle }) else { return }
        try await reconcileConfiguration(valueHandle: valueHandle, descriptorHandle: descriptorHandle, wanted: [])
    }

    /// How many subscriptions the value handle has.
    func subscriberCount(valueHandle: UInt16) -> Int {
        bearer.subscriberCount(valueHandle: valueHandle)
    }

    /// Whether this client has enabled notifications or indications on the value handle.
    public func isSubscribed(valueHandle: UInt16) -> Bool {
        state.withLock { $0.subscriptionConfigurations[valueHandle] != nil }
    }

    /// Every notification and indication that arrives, whether or not someone subscribed to
    /// its characteristic, in arrival order. The stream ends when the connection does; it
    /// holds at most ``subscriberBufferLimit`` notifications.
    public func notifications() -> AsyncStream<GATTNotification> {
        let (stream, continuation) = AsyncStream.makeStream(of: GATTNotification.self, bufferingPolicy: .bufferingOldest(Self.subscriberBufferLimit))
        let overflow = OverflowWarning(logger: logger, what: "notification listener")
        let sink = NotificationSink(deliver: { values in
            for value in values {
                let notification = GATTNotification(handle: value.handle, value: Array(value.value), isIndication: value.isIndication)
                if case .dropped = continuation.yield(notification) { overflow.record() }
            }
        }, finish: { _ in continuation.finish() })
        do {
            try bearer.addListener(sink)
        } catch {
            continuation.finish()
            return stream
        }
        let bearer = self.bearer
        continuation.onTermination = { _ in bearer.removeListener(sink) }
        return stream
    }

    /// Writes the descriptor until it says what the subscribers want: `wanted` while any is
    /// left, nothing once none is. Called inside ``subscriptionGate``, so that a subscriber that
    /// leaves while the descriptor is being written on is seen when the write completes, and the
    /// peer is not left notifying nobody.
    private func reconcileConfiguration(valueHandle: UInt16, descriptorHandle: UInt16, wanted: ClientCharacteristicConfiguration) async throws {
        while true {
            let target = bearer.subscriberCount(valueHandle: valueHandle) > 0 ? wanted : ClientCharacteristicConfiguration()
            let written = state.withLock { $0.subscriptionConfigurations[valueHandle]?.value } ?? ClientCharacteristicConfiguration()
            guard target != written else { return }
            // Recorded before the write: a write given up (cancelled, past its deadline, the link
            // lost) may still have taken effect, so turning the descriptor on counts as done and
            // is undone when nobody wants it any more. A write the peer refused did nothing; only
            // a completed write turns the descriptor off.
            if !target.isEmpty {
                state.withLock { $0.subscriptionConfigurations[valueHandle] = SubscriptionConfiguration(descriptorHandle: descriptorHandle, value: target) }
            }
            do {
                try await writeValue(target.bytes, handle: descriptorHandle)
            } catch let refusal as HostError {
                if case .att = refusal, !target.isEmpty {
                    state.withLock { state in
                        state.subscriptionConfigurations[valueHandle] = written.isEmpty ? nil
                            : SubscriptionConfiguration(descriptorHandle: descriptorHandle, value: written)
                    }
                }
                throw refusal
            }
            if target.isEmpty { state.withLock { $0.subscriptionConfigurations[valueHandle] = nil } }
        }
    }

    /// A subscription ended: no value reaches its sink from now on; after its
    /// characteristic's last one the descriptor is cleared in the background.
    func endSubscription(_ sink: NotificationSink, valueHandle: UInt16) {
        let left = bearer.removeSubscriber(sink, valueHandle: valueHandle)
        sink.finish(nil)
        // The last subscriber left: stop the peer sending (best effort, the link may be gone).
        // Service Changed stays on: this client watches it for its own cache. A descriptor not
        // written yet is cleared by the subscriber writing it, when its write completes.
        guard left == 0 else { return }
        clearConfigurationInBackground(valueHandle: valueHandle)
    }

    /// Clears the characteristic's descriptor if nobody subscribes to it, after any write under
    /// way (best effort: the link may be gone).
    private func clearConfigurationInBackground(valueHandle: UInt16) {
        guard closedError == nil, state.withLock({ valueHandle != $0.serviceChangedValueHandle }) else { return }
        // Detached: no scope of the caller's (an aborted operation) may stop it.
        Task.detached { [self] in
            do {
                try await subscriptionGate.enter()
                defer { subscriptionGate.leave() }
                guard let descriptorHandle = state.withLock({ $0.subscriptionConfigurations[valueHandle]?.descriptorHandle }) else { return }
                try await reconcileConfiguration(valueHandle: valueHandle, descriptorHandle: descriptorHandle, wanted: [])
            } catch {
                logger.debug("clearing the configuration of \(Hex.format(valueHandle)) failed: \(error)")
            }
        }
    }
}

/// One subscription to a characteristic's notifications or indications.
public final class GATTNotificationSubscription: Sendable {
    private let client: GATTClient
    private let sink: NotificationSink
    /// The characteristic's value handle.
    public let valueHandle: UInt16
    private let isCancelled = Mutex(false)

    init(client: GATTClient, sink: NotificationSink, valueHandle: UInt16) {
        self.client = client
        self.sink = sink
        self.valueHandle = valueHandle
    }

    /// Stops the values at once; after the characteristic's last subscription the
    /// descriptor is cleared in the background. Idempotent.
    public func cancel() {
        let first = isCancelled.withLock { cancelled in
            defer { cancelled = true }
            return !cancelled
        }
        guard first else { return }
        client.endSubscription(sink, valueHandle: valueHandle)
    }
}

/// Warns when a consumer that falls behind starts losing values, then every 1,000 values lost.
final class OverflowWarning: Sendable {
    private let logger: Logger
    private let what: String
    private let dropped = Mutex(0)

    init(logger: Logger, what: String) {
        self.logger = logger
        self.what = what
    }

    func record() {
        let count = dropped.withLock { count -> Int in
            count += 1
            return count
        }
        if count == 1 || count % 1000 == 0 {
            logger.warning("\(what) falls behind: \(count) value(s) dropped past \(GATTClient.subscriberBufferLimit) waiting")
        }
    }
}

/// What a Client Characteristic Configuration descriptor was set to.
struct SubscriptionConfiguration: Sendable {
    var descriptorHandle: UInt16
    var value: ClientCharacteristicConfiguration
}
