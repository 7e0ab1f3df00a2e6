import BluetoothCore
import BluetoothHCI

/// Identifies a controller on its link.
struct ControllerID: Hashable, Sendable, Comparable, CustomStringConvertible {
    let value: Int
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
    var description: String { "#\(value)" }
}

/// Identifies a connection (the pair of connection ends) on a link.
struct LinkConnectionID: Hashable, Sendable, Comparable {
    let value: Int
    static func < (lhs: Self, rhs: Self) -> Bool { lhs.value < rhs.value }
}

/// What a simulation timer does when it fires.
enum LinkTimer: Sendable {
    case advertisingEvent(ControllerID)
    case advertisingSetEvent(ControllerID, UInt8)
    case connectionEvent(LinkConnectionID)
    case scanTimeout(ControllerID)
    case establishmentFailure(ControllerID)
}

typealias TimerID = TimerQueue<LinkTimer>.ID

/// Legacy advertising (Core 6.0, Vol 4, Part E, 7.8.5-7.8.9).
struct AdvertisingState: Sendable {
    /// The defaults after reset: 1.28 s, ADV_IND, public, all channels (7.8.5).
    var parameters = LESetAdvertisingParametersCommand(intervalMin: 0x0800, intervalMax: 0x0800)
    var data: [UInt8] = []
    var scanResponseData: [UInt8] = []
    var isEnabled = false
    /// The advertiser address, fixed when advertising was enabled.
    var address: DeviceAddress?
    var enabledAt: Duration = .zero
    var timer: TimerID?
}

/// Scanning, legacy or extended (Core 6.0, Vol 4, Part E, 7.8.10-7.8.11, 7.8.64-7.8.65).
struct ScanningState: Sendable {
    /// The defaults after reset: passive, 10 ms / 10 ms (7.8.10).
    var legacyParameters = LESetScanParametersCommand(scanType: .passive, scanInterval: 0x0010, scanWindow: 0x0010)
    var extendedParameters = LESetExtendedScanParametersCommand(le1M: .init(scanType: .passive, scanInterval: 0x0010, scanWindow: 0x0010))
    var isEnabled = false
    /// Scanning was enabled with LE Set Extended Scan Enable: reports are LE Extended
    /// Advertising Reports.
    var usesExtendedReports = false
    /// The primary PHYs scanned: LE 1M for legacy scanning.
    var scannedPHYs: LEPhySet = .le1M
    var isActive = false
    var filterDuplicates = false
    var filterPolicy: ScanningFilterPolicy = .basicUnfiltered
    var schedule = ScanSchedule(start: .zero, interval: .milliseconds(10), window: .milliseconds(10))
    var duplicates = DuplicateFilter()
    /// The scanner's own address, fixed when scanning was enabled.
    var address: DeviceAddress?
    var timeoutTimer: TimerID?
}

/// LE (Extended) Create Connection in progress (Core 6.0, Vol 4, Part E, 7.8.12, 7.8.66).
struct InitiatingState: Sendable {
    var peer: DeviceAddress
    var filterPolicy: InitiatorFilterPolicy
    var ownAddress: DeviceAddress
    var schedule: ScanSchedule
    var parameters: LinkParameters
    /// Set once a connect request went to an advertiser that will never answer
    /// (``ConnectionAcceptance/failToEstablish``): the attempt can no longer be cancelled.
    var connectRequestSent = false
    var failureTimer: TimerID?
}

/// Connection parameters in HCI units.
struct LinkParameters: Sendable, Equatable {
    /// In units of 1.25 ms.
    var interval: UInt16
    /// In connection events.
    var latency: UInt16
    /// In units of 10 ms.
    var timeout: UInt16

    var intervalDuration: Duration { RadioTiming.connectionIntervalUnits(interval) }
    var timeoutDuration: Duration { RadioTiming.tenMilliseconds(timeout) }
}

/// Everything one virtual controller holds. Plain value; the simulation changes it.
struct ControllerState: Sendable {
    let id: ControllerID
    let name: String
    let publicAddress: BluetoothAddress
    var configuration: VirtualController.Configuration
    var position: VirtualPosition
    var acceptance: ConnectionAcceptance = .accept

    var randomAddress: BluetoothAddress?
    var eventMask: EventMask = .default
    var leEventMask: LEEventMask = .default
    var buffers: ACLBufferPool
    /// LE Write Suggested Default Data Length; 27 octets and 328 µs after reset (7.8.35).
    var suggestedTxOctets: UInt16 = 27
    var suggestedTxTime: UInt16 = 328
    /// The PHYs its host prefers on every connection (LE Set Default PHY): what it offers in a
    /// PHY update, whichever side starts it.
    var defaultPHYs: (tx: LEPhySet, rx: LEPhySet) = (.all, .all)
    var advertising = AdvertisingState()
    /// Extended advertising sets by handle (LinkSimulation+AdvertisingSets.swift).
    var advertisingSets: [UInt8: AdvertisingSetState] = [:]
    var scanning = ScanningState()
    var initiating: InitiatingState?
    var resolvingList = ResolvingList()
    /// The advertising, scanning and initiating commands its host used since the reset: the
    /// other family is refused (Core 6.0, Vol 4, Part E, 3.1.1).
    var commandFamily: LECommandFamily?
    /// Connection handle → connection.
    var connections: [UInt16: LinkConnectionID] = [:]
    private var nextHandle: UInt16 = 0x0040

    init(id: ControllerID, name: String, publicAddress: BluetoothAddress, configuration: VirtualController.Configuration, position: VirtualPosition) {
        self.id = id
        self.name = name
        self.publicAddress = publicAddress
        self.configuration = configuration
        self.position = position
        buffers = ACLBufferPool(capacity: Int(configuration.aclBufferCount))
    }

    /// The state after HCI Reset: identity, configuration, position and test settings stay.
    func afterReset() -> ControllerState {
        var fresh = ControllerState(id: id, name: name, publicAddress: publicAddress, configuration: configuration, position: position)
        fresh.acceptance = acceptance
        fresh.nextHandle = nextHandle
        return fresh
    }

    /// The address for an Own_Address_Type; `nil` when it needs a random address that was
    /// never set. Without a resolving list the RPA types fall back to the identity address
    /// (Core 6.0, Vol 4, Part E, 7.8.5).
    func ownAddress(_ type: OwnAddressType) -> DeviceAddress? {
        switch type {
        case .public, .resolvableOrPublic:
            return DeviceAddress(readableAddress, type: .public)
        case .random, .resolvableOrRandom:
            guard let randomAddress, randomAddress != .zero else { return nil }
            return DeviceAddress(randomAddress, type: .random)
        }
    }

    /// Advertising, scanning or initiating is on: the resolving list may not change while
    /// address resolution is enabled, nor resolution be switched (Core 6.0, Vol 4, Part E,
    /// 7.8.38-7.8.40, 7.8.44).
    var isUsingAddresses: Bool {
        advertising.isEnabled || advertisingSets.values.contains { $0.isEnabled } || scanning.isEnabled || initiating != nil
    }

    /// How a packet from `address` is taken: resolved with the resolving list when the
    /// controller has LL Privacy and its host enabled address resolution (Core 6.0, Vol 6,
    /// Part B, 4.7), else as it came.
    func resolution(of address: DeviceAddress) -> ResolvingList.Resolution {
        configuration.leFeatures.contains(.llPrivacy) ? resolvingList.resolve(address) : .unresolved
    }

    /// What Read BD_ADDR answers: the public address, or 00:00:00:00:00:00 without one.
    var readableAddress: BluetoothAddress { configuration.hasPublicAddress ? publicAddress : .zero }

    /// Whether `address` is one of this controller's own addresses.
    func owns(_ address: BluetoothAddress) -> Bool {
        address == readableAddress || address == randomAddress
    }

    /// A free connection handle (0x0000...0x0EFF, Core 6.0, Vol 4, Part E, 5.4.2): the next in
    /// turn, or the lowest free one (``VirtualController/Configuration/reusesHandles``).
    mutating func allocateHandle() -> UInt16 {
        if configuration.reusesHandles, let free = (UInt16(0x0040)...0x0EFF).first(where: { connections[$0] == nil }) { return free }
        while connections[nextHandle] != nil { nextHandle = nextHandle >= 0x0EFF ? 0x0001 : nextHandle + 1 }
        let handle = nextHandle
        nextHandle = nextHandle >= 0x0EFF ? 0x0001 : nextHandle + 1
        return handle
    }

    /// Whether the masks let this encoded event through. Command Complete, Command Status and
    /// Number Of Completed Packets cannot be masked (Core 6.0, Vol 4, Part E, 7.3.1); LE Meta
    /// subevents need both the LE Meta bit and their own bit of the LE event mask (7.8.1).
    func allowsEvent(_ encoded: [UInt8]) -> Bool {
        guard let code = encoded.first else { return false }
        switch code {
        case CommandCompleteEvent.eventCode, CommandStatusEvent.eventCode, NumberOfCompletedPacketsEvent.eventCode:
            return true
        case HCILEMetaEvent.eventCode:
            guard encoded.count > 2, eventMask.contains(.leMeta) else { return false }
            return leEventMask.contains(LEEventMask(subeventCode: encoded[2]))
        default:
            return eventMask.contains(EventMask(eventCode: code))
        }
    }

    /// The LE PHYs this controller can use.
    var supportedPHYs: LEPhySet {
        var phys: LEPhySet = [.le1M]
        if configuration.leFeatures.contains(.le2MPHY) { phys.insert(.le2M) }
        if configuration.leFeatures.contains(.leCodedPHY) { phys.insert(.leCoded) }
        return phys
    }
}
