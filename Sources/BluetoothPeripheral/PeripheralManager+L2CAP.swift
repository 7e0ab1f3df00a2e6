import BluetoothHost

/// L2CAP credit-based channels in the peripheral role, after CoreBluetooth's
/// `CBPeripheralManager.publishL2CAPChannel(withEncryption:)`: publish a PSM, tell centrals
/// (in an advertisement or a characteristic), and get each channel a central opens.
extension PeripheralManager {
    /// Publishes an L2CAP channel server and returns its PSM: `psm`, or with `nil` a free
    /// dynamic one (0x80…0xFF). `didOpen` gets each channel a central opens to it (on the host's
    /// actor: start a task for the channel's work). With `requiresEncryption`, centrals on
    /// unencrypted links are refused with Insufficient Authentication (or Insufficient
    /// Encryption when bonded), which tells them to pair or encrypt first.
    @discardableResult
    public func publishL2CAPChannel(psm: UInt16? = nil, requiresEncryption: Bool = false,
                                    parameters: L2CAPChannelParameters = L2CAPChannelParameters(),
                                    didOpen: @escaping @Sendable (L2CAPChannel) -> Void) async throws(L2CAPChannelError) -> UInt16 {
        guard let host else {
            throw .host(.unsupported("L2CAP channels over \(backend.backendName): the kernel's L2CAP sockets serve them outside BlueZ's D-Bus API"))
        }
        return try await host.listen(psm: psm, parameters: parameters, security: requiresEncryption ? .encrypted : .none, accept: didOpen).psm
    }

    /// Removes a published channel server; channels already open stay open.
    public func unpublishL2CAPChannel(psm: UInt16) async {
        await host?.stopListening(psm: psm)
    }
}
