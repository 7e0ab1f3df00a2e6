import BluetoothCore
import BluetoothHCI

/// This device's privacy (``HostConfiguration/privacy``; Core 6.0, Vol 3, Part C, 10.7): with
/// it on, the host advertises, scans and connects from resolvable private addresses made from
/// its IRK (``LEHost/localIdentityResolvingKey``) rather than its identity address, and makes
/// new ones every ``PrivacySettings/addressLifetime`` on ``HostConfiguration/clock``:
///
/// - the controller's random address (LE Set Random Address, Vol 4, Part E, 7.8.4) for
///   scanning, initiating and legacy advertising;
/// - one address per advertising set (LE Set Advertising Set Random Address, 7.8.52), the
///   legacy advertising's set of legacy PDUs included, so that two sets cannot be linked.
///
/// A change waits while a connection attempt or a pairing runs, and pauses the advertising and
/// scanning that are on while it is made (LEHost+AddressChanges.swift); one that fails is tried
/// again on a timer that doubles with each failure in a row (LocalAddressRotation.swift). Links
/// keep the addresses they were made with (``Connection/local``), which pairing's c1 and f5/f6 take,
/// while the identity distributed stays ``LEHost/identityAddress`` with this device's IRK.
extension LEHost {
    /// This device's resolvable private address in use now for scanning, connecting and legacy
    /// advertising; `nil` while privacy is off (``PrivacySettings/mode``) or before power-on.
    public var currentPrivateAddress: BluetoothAddress? { addressRotation?.deviceAddress }

    /// How many times this device's private addresses changed since power-on, the first ones
    /// included; 0 while privacy is off.
    public var privateAddressGeneration: Int { addressRotation?.generation ?? 0 }

    /// At power-on: this device's first private address, its resolving list, and the timer of
    /// the next change.
    func startPrivacy(_ info: ControllerInfo) async throws(HostError) {
        let settings = configuration.privacy
        addressResolver.setIgnoresIdentityAddressesWithIRK(settings.peerPrivacyMode == .network)
        if settings.usesPrivateAddresses {
            var rotation = LocalAddressRotation(irk: localIdentityResolvingKey, lifetime: settings.addressLifetime)
            rotation.isDue = true
            addressRotation = rotation
        }
        // An entry's mode is network privacy until LE Set Privacy Mode says otherwise: without
        // that command the controller would ignore peers at their identity address.
        let canSetMode = settings.peerPrivacyMode == .network || info.supports(LESetPrivacyModeCommand.self, listedAs: .leSetPrivacyMode)
        if settings.usesControllerResolution, let size = info.resolvingListSize, size > 0, Self.hasLLPrivacy(info), canSetMode {
            resolvingList = ResolvingListState(capacity: size)
            await loadResolvingList()
            if settings.usesPrivateAddresses, info.supports(.leSetResolvablePrivateAddressTimeout) {
                // The controller makes no address of its own for this host (it advertises, scans
                // and connects with own address type random), but its timeout matches ours in
                // case it ever does.
                let seconds = settings.addressLifetime / .seconds(1)
                let timeout = UInt16(clamping: Int(seconds.rounded()))
                let range = LESetResolvablePrivateAddressTimeoutCommand.timeoutRange
                _ = try? await send(LESetResolvablePrivateAddressTimeoutCommand(timeout: min(max(timeout, range.lowerBound), range.upperBound)))
            }
        }
        await updateAddressing()
        if let rotation = addressRotation, rotation.deviceAddress == nil {
            // Without its first private address the host would advertise its identity.
            throw .unsupported("this device's resolvable private address could not be set (LE Set Random Address); privacy is on")
        }
        if let rotation = addressRotation {
            logger.info("privacy on (\(settings.mode)): private address \(rotation.deviceAddress.map(\.description) ?? "none"), a new one every \(rotation.lifetime)")
        }
    }

    /// Whether the controller resolves private addresses itself: LL Privacy (LE feature bit 6)
    /// and the resolving list commands.
    static func hasLLPrivacy(_ info: ControllerInfo) -> Bool {
        info.leFeatures.contains(.llPrivacy)
            && info.supports(LEAddDeviceToResolvingListCommand.self, listedAs: .leAddDeviceToResolvingList)
            && info.supports(LERemoveDeviceFromResolvingListCommand.self, listedAs: .leRemoveDeviceFromResolvingList)
            && info.supports(LEClearResolvingListCommand.self, listedAs: .leClearResolvingList)
            && info.supports(LESetAddressResolutionEnableCommand.self, listedAs: .leSetAddressResolutionEnable)
    }

    /// New private addresses: the controller's random address when due, then every advertising
    /// set's that advertises from a random address and has not had a new one since. A set the
    /// controller refuses fails the change, to be tried again for the sets left (and only them)
    /// on the retry timer. The caller holds the addressing gate and paused what uses them
    /// (LEHost+AddressChanges.swift).
    func changePrivateAddresses() async throws(HostError) {
        guard let rotation = addressRotation else { return }
        if rotation.isDue {
            let address = rotation.makeAddress()
            try await applyRandomAddress(address)
            addressRotation?.didSetDeviceAddress(address, at: configuration.clock.now)
            let generation = addressRotation?.generation ?? 0
            logger.info("new private address \(address)\(generation > 1 ? " (change \(generation - 1))" : "")")
        }
        // Every set is tried, so that one the controller refuses holds back none of the others.
        let inUse = Set(advertisingSetsUsingRandomAddresses)
        var firstFailure: HostError?
        for handle in (addressRotation?.staleSets ?? []).sorted() {
            guard inUse.contains(handle) else {
                addressRotation?.forgetSet(handle)
                continue
            }
            let setAddress = rotation.makeAddress()
            do throws(HostError) {
                _ = try await send(LESetAdvertisingSetRandomAddressCommand(advertisingHandle: handle, randomAddress: setAddress))
                addressRotation?.didSetAddress(setAddress, ofSet: handle)
            } catch {
                logger.warning("advertising set \(handle) keeps its address for now: \(error)")
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
    }

    /// The advertising sets in the controller whose own address type is random: the app's
    /// and the legacy advertising's.
    private var advertisingSetsUsingRandomAddresses: [UInt8] {
        var handles = advertisingSetsState.sets.values.filter { Self.usesRandomAddress($0.parameters.ownAddressType) }.map(\.handle)
        if let handle = advertising.setHandle, let set = advertising.configuration?.set, Self.usesRandomAddress(set.parameters.ownAddressType) {
            handles.append(handle)
        }
        return handles.sorted()
    }

    static func usesRandomAddress(_ type: OwnAddressType) -> Bool {
        type == .random || type == .resolvableOrRandom
    }

    /// Gives a new advertising set its random address, when it advertises from one: its own
    /// private address with privacy on, else the controller's random address.
    func setRandomAddress(ofSet handle: UInt8, ownAddressType: OwnAddressType) async throws(HostError) {
        guard Self.usesRandomAddress(ownAddressType) else { return }
        let address: BluetoothAddress
        if var rotation = addressRotation {
            address = rotation.currentAddress(ofSet: handle) ?? rotation.makeAddress()
            rotation.didSetAddress(address, ofSet: handle)
            addressRotation = rotation
        } else if let randomAddress {
            address = randomAddress
        } else {
            return
        }
        _ = try await send(LESetAdvertisingSetRandomAddressCommand(advertisingHandle: handle, randomAddress: address))
    }

    /// The random address an advertising set advertises from.
    func randomAddress(ofSet handle: UInt8) -> BluetoothAddress? {
        addressRotation?.setAddresses[handle] ?? randomAddress
    }

    /// Arms the timer of the next change of private addresses.
    func scheduleAddressRotation() {
        // A change that is due already waits for what holds it back (addressingBlockerEnded).
        armAddressTimer(until: addressRotation?.lifetimeEnd)
    }

    /// Arms the timer that tries a failed change of addresses again, in place of the rotation's
    /// timer. When only some sets' addresses are left to change, never past the lifetime's end:
    /// a set the controller keeps refusing does not keep the other addresses beyond it. A
    /// change made meanwhile (a blocker ended) disarms it.
    func scheduleAddressRetry(after delay: Duration) {
        let retry = configuration.clock.now + delay
        armAddressTimer(until: addressRotation?.lifetimeEnd.map { min($0, retry) } ?? retry)
    }

    /// The one timer of address changes (rotation and retry): cancels the armed one and, given
    /// a deadline and an open transport, makes the changes pending at the deadline.
    private func armAddressTimer(until deadline: BluetoothClock.Instant?) {
        addressRotationTimer?.cancel()
        addressRotationTimer = nil
        guard let deadline, transportClosure == nil else { return }
        let clock = configuration.clock
        addressRotationTimer = Task { [weak self] in
            do { try await clock.sleep(until: deadline) } catch { return }
            await self?.addressTimerFired()
        }
    }

    private func addressTimerFired() async {
        // Replaced after it woke: the newer timer, or the change that replaced it, takes over.
        guard !Task.isCancelled, addressRotation != nil else { return }
        // From here on this task is no longer the armed timer: a change that ends while this one
        // waits for the addressing gate arms (or disarms) the next timer without cancelling it,
        // which would leave the change it came for undone and no timer armed.
        addressRotationTimer = nil
        addressRotation?.timerFired(at: configuration.clock.now)
        await updateAddressing()
    }
}
