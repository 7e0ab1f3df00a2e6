import BluetoothCore
import BluetoothHCI

/// This device's identity address. A controller with a public address gives it; one without
/// (Read BD_ADDR answers 00:00:00:00:00:00, as Zephyr's `hci_uart` on an nRF52840 does) gets a
/// static random address instead (Core 6.0, Vol 3, Part C, 10.8.1 and Vol 6, Part B,
/// 1.3.2.1): its own where it can tell it (Zephyr's Read Static Addresses), else one the host
/// generates once per adapter and keeps in ``HostConfiguration/staticAddressStore``. The host
/// sets it with LE Set Random Address and then advertises, scans and connects with own address
/// type random, so that a peer never sees the public address 00:00:00:00:00:00.
extension LEHost {
    /// This device's identity address once powered on: the controller's public address, or the
    /// static random address the host uses on a controller without one. Peers bond with it; it
    /// is distributed in Identity Address Information when pairing.
    public var identityAddress: DeviceAddress? { identity?.address }

    /// The own address type to send for one the app asked for: on a controller without a public
    /// address, public becomes random (the static identity, or the random address the app set
    /// since), and "resolvable or public" becomes "resolvable or random"; so it does with
    /// privacy on, the random address then being this device's resolvable private address.
    func ownAddressType(for requested: OwnAddressType) -> OwnAddressType {
        guard identity?.isStaticRandom == true || addressRotation != nil else { return requested }
        switch requested {
        case .public: return .random
        case .resolvableOrPublic: return .resolvableOrRandom
        case .random, .resolvableOrRandom: return requested
        }
    }

    /// The own address type of scanning and connecting: public, or random on a controller
    /// without a public address or with privacy on.
    var ownAddressTypeForScanningAndConnecting: OwnAddressType { ownAddressType(for: .public) }

    /// Decides the identity for the controller `info` describes; on a controller without a
    /// public address, sets its random address to the static identity address.
    func establishIdentity(_ info: ControllerInfo) async throws(HostError) -> LocalIdentity {
        if info.hasPublicAddress {
            return LocalIdentity(address: DeviceAddress(info.address, type: .public), source: .publicAddress)
        }
        let identity: LocalIdentity
        if let own = info.staticAddress {
            identity = LocalIdentity(address: DeviceAddress(own, type: .random), source: .controllerStaticAddress)
        } else {
            identity = await generatedIdentity()
        }
        try await applyRandomAddress(identity.address.address)
        return identity
    }

    /// Sets the controller's random address (LE Set Random Address, Core 6.0, Vol 4, Part E,
    /// 7.8.4) and remembers it.
    func applyRandomAddress(_ address: BluetoothAddress) async throws(HostError) {
        _ = try await send(LESetRandomAddressCommand(address: address))
        randomAddress = address
    }

    /// The static address kept for this adapter, else a new one, kept for the next run.
    private func generatedIdentity() async -> LocalIdentity {
        let adapter = controller.transport.name
        let store = staticAddressStore
        let kept: BluetoothAddress?
        do {
            kept = try await store.address(forAdapter: adapter)
        } catch {
            // The kept address is there but cannot be read now: a new one for this run only,
            // never saved over it, so the bonds made under the kept one count again later.
            let address = BluetoothAddress.randomStatic()
            logger.error("cannot read the static address kept for \(adapter): \(error); using \(address) for this run only, bonds made now will not count after a restart")
            return LocalIdentity(address: DeviceAddress(address, type: .random), source: .generatedStaticAddress(isNew: true, isKept: false))
        }
        if let kept, kept.isStaticRandom {
            return LocalIdentity(address: DeviceAddress(kept, type: .random),
                                 source: .generatedStaticAddress(isNew: false, isKept: store.keepsAddressesAcrossRuns))
        }
        let address = BluetoothAddress.randomStatic()
        var isKept = store.keepsAddressesAcrossRuns
        do {
            try await store.save(address, forAdapter: adapter)
        } catch {
            logger.warning("cannot keep the static address \(address) of \(adapter): \(error); bonds made now will not count after a restart")
            isKept = false
        }
        return LocalIdentity(address: DeviceAddress(address, type: .random), source: .generatedStaticAddress(isNew: true, isKept: isKept))
    }

    /// Logs what the host does on this controller: its identity, and what the controller lacks.
    func logControllerAdaptations(_ info: ControllerInfo, identity: LocalIdentity) {
        if identity.isStaticRandom {
            logger.notice("controller has no public address: identity \(identity)")
        }
        for adaptation in info.adaptations where adaptation != .noPublicAddress {
            logger.notice("controller: \(adaptation)")
        }
    }
}
