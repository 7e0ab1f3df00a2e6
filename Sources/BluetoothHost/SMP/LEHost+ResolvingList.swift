import BluetoothCore
import BluetoothHCI

/// Resolution in the controller (LL Privacy, Core 6.0, Vol 6, Part B, 4.7 and 6.9): on a
/// controller with LE feature bit 6 the host keeps its resolving list in step with the bonds
/// that have an IRK (added when a bond is made, removed with it, loaded again when another
/// process changed the bonds), with this device's IRK as the local one while privacy is on,
/// each entry in the privacy mode of ``PrivacySettings/mode``, and address resolution on. The
/// controller then reports those peers with their identity (advertising reports and
/// connections with address types 0x02 and 0x03, the private address beside it in LE Enhanced
/// Connection Complete), accepts their private addresses where a filter names the identity,
/// and connects to an identity (LEHost+Connecting.swift). The host resolves only what the list
/// has no room for (``AddressResolver/controllerResolvedIdentities``).
///
/// A change is made while no advertising, scanning or initiating uses the list
/// (LEHost+AddressChanges.swift); a refusal for want of room leaves the rest to the host.
extension LEHost {
    /// The bonded identities the controller resolves, by its resolving list; empty without
    /// LL Privacy (or with ``PrivacySettings/usesControllerResolution`` off).
    public var controllerResolvedIdentities: Set<DeviceAddress> { resolvingList?.controllerResolved ?? [] }

    /// Whether the controller resolves `identity`'s private addresses now.
    func controllerResolves(_ identity: DeviceAddress) -> Bool {
        resolvingList?.resolves(identity) == true
    }

    /// Loads what the list should hold from the bonds, oldest first (power-on, or the store's
    /// bonds changed).
    func loadResolvingList() async {
        guard resolvingList != nil else { return }
        let local = localAddress
        let bonds = await settledBondStore().bonds().filter { $0.localIdentity == local }.sorted { $0.createdAt < $1.createdAt }
        resolvingList?.setWanted(bonds.compactMap { bond in bond.peerKeys.identityResolvingKey.map { (bond.peerIdentity, $0) } })
    }

    /// The bonds changed: the list follows as soon as nothing uses it.
    func resolvingListNeedsUpdate() {
        guard resolvingList?.isInStep == false else { return }
        Task { await self.updateAddressing() }
    }

    /// Sends the changes that bring the controller's list in step. The caller holds the
    /// addressing gate and paused what uses the list.
    func syncResolvingList() async {
        while let change = resolvingList?.nextChange() {
            do {
                try await apply(change)
                resolvingList?.didApply(change)
                logger.debug("resolving list: \(change)")
            } catch HostError.hci(.commandFailed(_, .memoryCapacityExceeded)) {
                resolvingList?.controllerIsFull()
                logger.notice("the controller's resolving list is full at \(resolvingList?.capacity ?? 0) entries: the host resolves the private addresses of \(resolvingList?.overflow.count ?? 0) more bonded peer(s)")
            } catch HostError.hci(.commandFailed(_, .unknownConnectionIdentifier)) {
                if case let .remove(identity) = change { resolvingList?.controllerLacks(identity) }
            } catch {
                logger.error("the controller's resolving list could not be changed (\(change)): \(error); the host resolves private addresses itself from now on")
                resolvingList = nil
                _ = try? await send(LESetAddressResolutionEnableCommand(enable: false))
            }
        }
        addressResolver.setControllerResolved(resolvingList?.controllerResolved ?? [])
    }

    private func apply(_ change: ResolvingListState.Change) async throws(HostError) {
        switch change {
        case .clear:
            _ = try await send(LEClearResolvingListCommand())
        case let .add(identity, irk):
            // The local IRK lets the controller tell directed advertising at this device's
            // private addresses; all zeros while this device uses its identity address.
            let localIRK = addressRotation != nil ? SMPKeyBytes.littleEndian(localIdentityResolvingKey) : [UInt8](repeating: 0, count: 16)
            _ = try await send(LEAddDeviceToResolvingListCommand(peerIdentityAddressType: identity.type.base, peerIdentityAddress: identity.address,
                                                                 peerIRK: SMPKeyBytes.littleEndian(irk), localIRK: localIRK))
            // Network privacy mode is the entry's mode once added (Vol 4, Part E, 7.8.77).
            if configuration.privacy.peerPrivacyMode == .device {
                _ = try await send(LESetPrivacyModeCommand(peerIdentityAddressType: identity.type.base, peerIdentityAddress: identity.address,
                                                           privacyMode: .device))
            }
        case let .remove(identity):
            _ = try await send(LERemoveDeviceFromResolvingListCommand(peerIdentityAddressType: identity.type.base, peerIdentityAddress: identity.address))
        case .enableResolution:
            _ = try await send(LESetAddressResolutionEnableCommand(enable: true))
        }
    }
}
