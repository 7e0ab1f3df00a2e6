import BluetoothCore

extension GATTClient {
    /// Subscribes to a characteristic's notifications (or indications, when it only
    /// indicates or `preferIndications` is set) by writing its Client Characteristic
    /// Configuration descriptor (Core 6.0, Vol 3, Part G, 4.10 and 4.11).
    ///
    /// Returns the values in the order the peer sent them. Several subscribers may share a
    /// characteristic; the descriptor is written for the first and cleared after the last.
    /// The stream ends when its consumer stops, after ``unsubscribe(from:)``, or with an
    /// error when the connection drops.
    ///
    /// - Parameter clientConfigurationHandle: the descriptor's handle if known; otherwise the
    ///   characteristic's descriptors are discovered to find it.
    public func subscribe(to characteristic: GATTCharacteristic, clientConfigurationHandle: UInt16? = nil,
                          preferIndications: Bool = false) async throws -> AsyncThrowingStream<[UInt8], any Error> {
        if let closedError { throw closedError }
        let configuration: ClientCharacteristicConfiguration
        switch (characteristic.properties.contains(.notify), characteristic.properties.contains(.indicate)) {
        case (true, true): configuration = preferIndications ? .indication : .notification
        case (true, false): configuration = .notification
        case (false, true): configuration = .indication
        case (false, false): throw HostError.unsupported("characteristic \(characteristic.uuid) neither notifies nor indicates")
        }
        let cccd: UInt16
        if let clientConfigurationHandle {
            cccd = clientConfigurationHandle
        } else if let known = subscriptionConfigurations[characteristic.valueHandle]?.descriptorHandle {
            cccd = known
        } else {
            let descriptors = try await discoverDescriptors(of: characteristic)
            guard let found = descriptors.first(where: { $0.uuid == GATTAttributeType.clientCharacteristicConfiguration }) else {
                throw HostError.notFound("Client Characteristic Configuration descriptor of \(characteristic.uuid)")
            }
            cccd = found.handle
        }

        let valueHandle = characteristic.valueHandle
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, bufferingPolicy: .unbounded)
        nextListenerID += 1
        let id = nextListenerID
        // Registered before the descriptor is written: the first value may follow at once.
        subscribers[valueHandle, default: [:]][id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { [weak self] in await self?.removeSubscriber(id: id, valueHandle: valueHandle) }
        }
        do {
            // One subscriber at a time checks and writes the descriptor: others arriving while
            // it is written wait, then find it written instead of writing it again.
            try await subscriptionGate.enter()
            defer { subscriptionGate.leave() }
            if subscriptionConfigurations[valueHandle]?.value != configuration {
                try await writeValue(configuration.bytes, handle: cccd)
                subscriptionConfigurations[valueHandle] = SubscriptionConfiguration(descriptorHandle: cccd, value: configuration)
            }
        } catch {
            let error = HostError.wrap(error)
            subscribers[valueHandle]?[id] = nil
            continuation.finish(throwing: error)
            throw error
        }
        return stream
    }

    /// Ends every subscription to the characteristic and clears its Client Characteristic
    /// Configuration descriptor.
    public func unsubscribe(from characteristic: GATTCharacteristic) async throws {
        let valueHandle = characteristic.valueHandle
        let configuration = subscriptionConfigurations.removeValue(forKey: valueHandle)
        for continuation in (subscribers.removeValue(forKey: valueHandle) ?? [:]).values {
            continuation.finish()
        }
        if let configuration {
            try await writeValue(ClientCharacteristicConfiguration().bytes, handle: configuration.descriptorHandle)
        }
    }

    /// Whether this client has enabled notifications or indications on the value handle.
    public func isSubscribed(valueHandle: UInt16) -> Bool {
        subscriptionConfigurations[valueHandle] != nil
    }

    /// Every notification and indication that arrives, whether or not someone subscribed to
    /// its characteristic, in arrival order. The stream ends when the connection does.
    public func notifications() -> AsyncStream<GATTNotification> {
        notificationListeners.makeStream()
    }

    private func removeSubscriber(id: UInt64, valueHandle: UInt16) async {
        guard subscribers[valueHandle]?.removeValue(forKey: id) != nil else { return }
        guard subscribers[valueHandle]?.isEmpty ?? true else { return }
        subscribers[valueHandle] = nil
        // The last subscriber left: stop the peer sending (best effort, the link may be gone).
        // Service Changed stays on: this client watches it for its own cache.
        guard valueHandle != serviceChangedValueHandle else { return }
        if let configuration = subscriptionConfigurations.removeValue(forKey: valueHandle), closedError == nil {
            _ = try? await writeValue(ClientCharacteristicConfiguration().bytes, handle: configuration.descriptorHandle)
        }
    }

    func deliver(_ notification: GATTNotification) {
        if notification.handle == serviceChangedValueHandle {
            didReceiveServiceChanged(notification.value)
        }
        if let handleSubscribers = subscribers[notification.handle] {
            for continuation in handleSubscribers.values { continuation.yield(notification.value) }
        }
        notificationListeners.yield(notification)
    }

    func failListeners(with error: HostError) {
        for handleSubscribers in subscribers.values {
            for continuation in handleSubscribers.values { continuation.finish(throwing: error) }
        }
        subscribers.removeAll()
        subscriptionConfigurations.removeAll()
        notificationListeners.finish()
        serviceChangeListeners.finish()
    }
}

/// What a Client Characteristic Configuration descriptor was set to.
struct SubscriptionConfiguration: Sendable {
    var descriptorHandle: UInt16
    var value: ClientCharacteristicConfiguration
}
