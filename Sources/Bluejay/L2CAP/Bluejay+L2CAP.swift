import BluetoothHost

/// L2CAP credit-based channels to the connected peripheral, after CoreBluetooth's
/// `CBPeripheral.openL2CAPChannel(_:)`: the peripheral publishes a PSM (in an advertisement or
/// a characteristic) and the app opens a channel to it. Opening is a queued operation like a
/// read; the channel's reads and writes then run on the channel, outside the queue.
extension Bluejay {
    /// Opens a channel to `psm` on the connected peripheral; `completion` runs on the callback
    /// queue with the channel, or why it could not open (``BluejayError/l2cap(_:)`` with the
    /// peripheral's refusal).
    public func openL2CAPChannel(psm: UInt16, parameters: L2CAPChannelParameters = L2CAPChannelParameters(),
                                 completion: @escaping @Sendable (Result<L2CAPChannel, BluejayError>) -> Void) {
        submitGATT("open L2CAP channel \(psm)", work: { link in try await link.connection.openChannel(psm: psm, parameters: parameters) },
                   deliver: onCallbackQueue(completion))
    }

    /// Opens a channel to `psm` on the connected peripheral, as a queued operation.
    public func openL2CAPChannel(psm: UInt16, parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(BluejayError) -> L2CAPChannel {
        try await performGATT("open L2CAP channel \(psm)") { link in try await link.connection.openChannel(psm: psm, parameters: parameters) }
    }
}

extension RemotePeripheral {
    /// Opens a channel to `psm` on this peripheral, on its queue.
    public func openL2CAPChannel(psm: UInt16, parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(BluejayError) -> L2CAPChannel {
        try await perform("open L2CAP channel \(psm)") { link in try await link.connection.openChannel(psm: psm, parameters: parameters) }
    }
}
