extension Connection {
    /// Opens an LE credit-based channel to `psm` on the peer (see
    /// ``LEHost/openChannel(psm:on:parameters:)``).
    public func openChannel(psm: UInt16, parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(L2CAPChannelError) -> L2CAPChannel {
        try await host.openChannel(psm: psm, on: self, parameters: parameters)
    }

    /// Opens up to five enhanced credit-based channels to `psm` at once (see
    /// ``LEHost/openEnhancedChannels(psm:count:on:parameters:)``).
    public func openEnhancedChannels(psm: UInt16, count: Int, parameters: L2CAPChannelParameters = L2CAPChannelParameters())
        async throws(L2CAPChannelError) -> [L2CAPChannel] {
        try await host.openEnhancedChannels(psm: psm, count: count, on: self, parameters: parameters)
    }

    /// The credit-based channels open on this connection.
    public var channels: [L2CAPChannel] { host.channels(on: self) }
}
