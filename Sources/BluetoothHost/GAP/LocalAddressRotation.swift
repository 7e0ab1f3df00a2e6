import BluetoothCore
import BluetoothCrypto

/// This device's resolvable private addresses (Core 6.0, Vol 3, Part C, 10.7 and 10.8.2.2):
/// the one the controller's random address holds (scanning, initiating, legacy advertising)
/// and one per advertising set, each made from this device's IRK, and when they are due to
/// change. A plain value: `LEHost+Privacy.swift` sends the commands.
struct LocalAddressRotation: Sendable {
    /// How long one set of addresses is used (``PrivacySettings/addressLifetime``).
    let lifetime: Duration
    private let irk: UInt128

    /// The controller's random address, once set.
    private(set) var deviceAddress: BluetoothAddress?
    /// Each advertising set's random address, by handle, once set.
    private(set) var setAddresses: [UInt8: BluetoothAddress] = [:]
    /// The advertising sets whose address is older than the controller's: the rest of a change
    /// whose first part (the controller's random address) was made.
    private(set) var staleSets: Set<UInt8> = []
    /// When the addresses in use now are due to change.
    private(set) var deadline: BluetoothClock.Instant?
    /// The deadline passed while something the change must wait for was running: the change
    /// is made as soon as nothing stands in its way.
    var isDue = false
    /// How many times the addresses changed since power-on (the first ones included).
    private(set) var generation = 0
    /// Changes that failed in a row since the controller's address last changed, or the last
    /// change was made whole.
    private(set) var failedChanges = 0

    /// The wait before trying a failed change again, doubled with each failure in a row.
    static let firstRetryDelay: Duration = .seconds(2)

    init(irk: UInt128, lifetime: Duration) {
        self.irk = irk
        self.lifetime = max(lifetime, PrivacySettings.minimumAddressLifetime)
    }

    /// A new resolvable private address from this device's IRK (Vol 6, Part B, 1.3.2.2).
    func makeAddress() -> BluetoothAddress {
        BluetoothAddress(rawValue: ResolvablePrivateAddress.generate(irk: irk))
    }

    /// Whether `address` is one of this device's resolvable private addresses.
    func isOwn(_ address: BluetoothAddress) -> Bool {
        ResolvablePrivateAddress.resolves(address.rawValue, irk: irk)
    }

    /// The end of the addresses' lifetime while it is still ahead: `nil` once every address is
    /// due (the change then waits only for what holds it back).
    var lifetimeEnd: BluetoothClock.Instant? { isDue ? nil : deadline }

    /// Whether some of the addresses are due to change: all of them, or the sets' that a change
    /// has not reached yet.
    var isChangePending: Bool { isDue || !staleSets.isEmpty }

    /// The address timer fired at `now`: every address is due once the lifetime has ended.
    mutating func timerFired(at now: BluetoothClock.Instant) {
        if let deadline, now >= deadline { isDue = true }
    }

    /// The address `handle`'s set advertises from, unless a change has not reached it yet.
    func currentAddress(ofSet handle: UInt8) -> BluetoothAddress? {
        staleSets.contains(handle) ? nil : setAddresses[handle]
    }

    /// The controller's random address changed to `address` at `now`: the next change is due
    /// one lifetime later, and every advertising set's address is to change now too.
    mutating func didSetDeviceAddress(_ address: BluetoothAddress, at now: BluetoothClock.Instant) {
        deviceAddress = address
        deadline = now + lifetime
        isDue = false
        generation += 1
        staleSets = Set(setAddresses.keys)
        // The sets' tries start over too: a set refused for good is tried a few times in each
        // lifetime, and a later failure of this address waits 2 s again, not a lifetime.
        failedChanges = 0
    }

    /// A change failed (the controller refused a command or did not answer; the addresses in
    /// use stay): how long to wait before the next try, ``firstRetryDelay`` doubled with each
    /// failure in a row, at most one lifetime.
    ///
    /// A set the controller keeps refusing is tried (pausing advertising and scanning each time)
    /// with the wait doubling until the lifetime ends, not every few seconds.
    mutating func changeFailed() -> Duration {
        failedChanges += 1
        return min(Self.firstRetryDelay * (1 << min(failedChanges - 1, 20)), lifetime)
    }

    mutating func didSetAddress(_ address: BluetoothAddress, ofSet handle: UInt8) {
        setAddresses[handle] = address
        staleSets.remove(handle)
        endFailuresIfChanged()
    }

    /// The advertising set is gone from the controller: its next start gets a new address.
    mutating func forgetSet(_ handle: UInt8) {
        setAddresses[handle] = nil
        staleSets.remove(handle)
        endFailuresIfChanged()
    }

    private mutating func endFailuresIfChanged() {
        if !isChangePending { failedChanges = 0 }
    }

    /// The controller was reset: its advertising sets are gone (the host sets its random
    /// address again itself).
    mutating func controllerWasReset() {
        setAddresses = [:]
        staleSets = []
        endFailuresIfChanged()
    }
}
