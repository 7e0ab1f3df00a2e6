import BluetoothCore
import BluetoothHCI

/// One advertising set this host runs (Core 6.0, Vol 4, Part E, 7.8.53): its handle in the
/// controller. Several sets advertise at once, each with its own data and parameters.
public struct AdvertisingSet: Sendable, Hashable, CustomStringConvertible {
    /// The Advertising_Handle.
    public let handle: UInt8
    /// The controller lacks extended advertising: this set runs on the legacy commands
    /// (only one such set at a time).
    public let isLegacyFallback: Bool

    public init(handle: UInt8, isLegacyFallback: Bool = false) {
        self.handle = handle
        self.isLegacyFallback = isLegacyFallback
    }

    public var description: String { "advertising set \(handle)\(isLegacyFallback ? " (legacy commands)" : "")" }
}

/// How an advertising set advertises (Core 6.0, Vol 4, Part E, 7.8.53, 7.8.56).
public struct ExtendedAdvertisingParameters: Sendable, Hashable {
    /// Units of 0.625 ms, 0x000020 (20 ms) to 0xFFFFFF.
    public var intervalRange: ClosedRange<UInt32> = 0x0000A0...0x0000F0
    /// Centrals may connect. Extended (not legacy) advertising cannot be connectable and
    /// scannable at once (7.8.53).
    public var isConnectable = false
    /// Scanners may ask for the scan response.
    public var isScannable = false
    /// Legacy advertising PDUs (ADV_IND, ADV_SCAN_IND, ADV_NONCONN_IND): every scanner hears
    /// them, but data and scan response are limited to 31 octets and the PHY is LE 1M.
    public var usesLegacyPDUs = false
    /// LE 1M or LE Coded: where the ADV_EXT_IND goes out.
    public var primaryPHY: LEPhy = .le1M
    /// LE 1M, LE 2M or LE Coded: where the data goes out (AUX_ADV_IND and its chain).
    public var secondaryPHY: LEPhy = .le1M
    public var ownAddressType: OwnAddressType = .public
    public var channelMap: AdvertisingChannelMap = .all
    public var filterPolicy: AdvertisingFilterPolicy = .acceptAll
    /// Preferred TX power in dBm, `nil` for the controller's choice.
    public var txPower: Int8?
    /// Put the TX power in the extended header, for scanners to estimate path loss.
    public var includesTxPower = false
    /// The Advertising SID (0...15) scanners tell sets of one advertiser apart by; `nil` uses
    /// the set's handle (modulo 16).
    public var sid: UInt8?
    /// Stop after this long (10 ms resolution, at most 655.35 s); `nil` advertises until stopped.
    public var duration: Duration?
    /// Stop after this many advertising events (1...255); `nil` sets no limit.
    public var maximumEvents: UInt8?

    public init(intervalRange: ClosedRange<UInt32> = 0x0000A0...0x0000F0, isConnectable: Bool = false, isScannable: Bool = false,
                usesLegacyPDUs: Bool = false, primaryPHY: LEPhy = .le1M, secondaryPHY: LEPhy = .le1M,
                duration: Duration? = nil, maximumEvents: UInt8? = nil) {
        self.intervalRange = intervalRange
        self.isConnectable = isConnectable
        self.isScannable = isScannable
        self.usesLegacyPDUs = usesLegacyPDUs
        self.primaryPHY = primaryPHY
        self.secondaryPHY = secondaryPHY
        self.duration = duration
        self.maximumEvents = maximumEvents
    }

    /// The Advertising_Event_Properties these parameters ask for.
    public var properties: AdvertisingEventProperties {
        var properties: AdvertisingEventProperties = usesLegacyPDUs ? [.legacy] : []
        if isConnectable { properties.insert(.connectable) }
        // Legacy connectable undirected advertising is always scannable (ADV_IND).
        if isScannable || (usesLegacyPDUs && isConnectable) { properties.insert(.scannable) }
        if includesTxPower { properties.insert(.includeTxPower) }
        return properties
    }

    /// Whether a scanner can get a scan response.
    var hasScanResponse: Bool { properties.contains(.scannable) }

    /// The range LE Set Extended Advertising Parameters accepts (7.8.53).
    public static let intervalLimits: ClosedRange<UInt32> = 0x000020...0xFFFFFF
    /// The longest Duration of LE Set Extended Advertising Enable: 0xFFFF × 10 ms (7.8.56).
    public static let maximumDuration: Duration = .milliseconds(655_350)
}

/// Why an advertising set stopped on its own (LE Advertising Set Terminated, Core 6.0,
/// Vol 4, Part E, 7.7.65.18).
public struct AdvertisingSetTermination: Sendable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        /// A central connected: the connection it made.
        case connected(Connection)
        /// The set's duration ran out.
        case timeout
        /// The set sent its maximum number of advertising events.
        case limitReached
        /// Another status the controller reported.
        case other(HCIStatus)

        public static func == (lhs: Reason, rhs: Reason) -> Bool {
            switch (lhs, rhs) {
            case let (.connected(a), .connected(b)): return a === b
            case (.timeout, .timeout), (.limitReached, .limitReached): return true
            case let (.other(a), .other(b)): return a == b
            default: return false
            }
        }
    }

    public var set: AdvertisingSet
    public var reason: Reason
    /// How many extended advertising events the set completed (0 when the controller did
    /// not count them).
    public var completedEvents: Int

    public var description: String {
        let why: String
        switch reason {
        case let .connected(connection): why = "connected to \(connection.peer) (handle \(Hex.format(connection.handle, digits: 4)))"
        case .timeout: why = "duration ran out"
        case .limitReached: why = "event limit reached"
        case let .other(status): why = "\(status)"
        }
        return "\(set) ended: \(why) after \(completedEvents) event(s)"
    }
}

/// An advertising set's commands, checked and encoded: what the host sends to create it.
struct AdvertisingSetConfiguration: Sendable, Equatable {
    var handle: UInt8
    var parameters: ExtendedAdvertisingParameters
    var data: [UInt8]
    var scanResponse: [UInt8]

    /// Encodes the data and checks the parameters against the controller's limit
    /// (`maximumDataLength`, from LE Read Maximum Advertising Data Length); a
    /// `HostError.invalidArgument` says what does not fit.
    init(handle: UInt8, data: AdvertisingData, scanResponse: AdvertisingData?, parameters: ExtendedAdvertisingParameters,
         maximumDataLength: Int) throws(HostError) {
        let limits = ExtendedAdvertisingParameters.intervalLimits
        guard limits.contains(parameters.intervalRange.lowerBound), limits.contains(parameters.intervalRange.upperBound) else {
            throw .invalidArgument("advertising interval \(parameters.intervalRange) is outside 0x000020...0xFFFFFF (units of 0.625 ms)")
        }
        guard parameters.properties.isValid else {
            throw .invalidArgument("extended advertising cannot be both connectable and scannable; use legacy PDUs or drop one")
        }
        guard parameters.primaryPHY == .le1M || parameters.primaryPHY == .leCoded else {
            throw .invalidArgument("the primary advertising PHY is LE 1M or LE Coded, not \(parameters.primaryPHY)")
        }
        guard parameters.secondaryPHY != .leCodedS2 else {
            throw .invalidArgument("the secondary advertising PHY is LE 1M, LE 2M or LE Coded")
        }
        if parameters.usesLegacyPDUs, parameters.primaryPHY != .le1M {
            throw .invalidArgument("legacy advertising PDUs go out on LE 1M only")
        }
        if let sid = parameters.sid, sid > LESetExtendedAdvertisingParametersCommand.maximumSID {
            throw .invalidArgument("advertising SID \(sid) is outside 0...15")
        }
        if let duration = parameters.duration, duration < .milliseconds(10) || duration > ExtendedAdvertisingParameters.maximumDuration {
            throw .invalidArgument("advertising duration \(duration) is outside 10 ms...655.35 s")
        }
        if parameters.maximumEvents == 0 { throw .invalidArgument("maximumEvents is 1...255, or nil for no limit") }
        if let scanResponse, !scanResponse.structures.isEmpty, !parameters.hasScanResponse {
            throw .invalidArgument("this advertising is not scannable, so it has no scan response; make it scannable or drop the scan response")
        }
        // Legacy PDUs carry 31 octets (Core 6.0, Vol 6, Part B, 2.3.1); extended ones up to
        // the controller's maximum.
        let limit = parameters.usesLegacyPDUs ? AdvertisingData.legacyMaximumLength
            : min(maximumDataLength, AdvertisingData.extendedMaximumLength)
        do {
            self.data = try data.encoded(maximumLength: limit)
        } catch {
            throw .invalidArgument("advertising data: \(error)")
        }
        do {
            self.scanResponse = try (scanResponse ?? AdvertisingData()).encoded(maximumLength: limit)
        } catch {
            throw .invalidArgument("scan response data: \(error)")
        }
        self.handle = handle
        self.parameters = parameters
    }

    var parametersCommand: LESetExtendedAdvertisingParametersCommand {
        LESetExtendedAdvertisingParametersCommand(
            advertisingHandle: handle, properties: parameters.properties,
            primaryIntervalMin: parameters.intervalRange.lowerBound, primaryIntervalMax: parameters.intervalRange.upperBound,
            primaryChannelMap: parameters.channelMap, ownAddressType: parameters.ownAddressType,
            filterPolicy: parameters.filterPolicy, txPower: parameters.txPower, primaryPHY: parameters.primaryPHY,
            secondaryPHY: parameters.secondaryPHY, advertisingSID: parameters.sid ?? handle % 16)
    }

    /// The data commands, fragmented by the host (Vol 4, Part E, 7.8.54).
    var dataCommands: [LESetExtendedAdvertisingDataCommand] {
        LESetExtendedAdvertisingDataCommand.fragments(of: data, advertisingHandle: handle)
    }

    /// The scan response commands, none when the set is not scannable (7.8.55: Command
    /// Disallowed otherwise, for non-empty data).
    var scanResponseCommands: [LESetExtendedScanResponseDataCommand] {
        guard parameters.hasScanResponse else { return [] }
        return LESetExtendedScanResponseDataCommand.fragments(of: scanResponse, advertisingHandle: handle)
    }

    var enableEntry: LESetExtendedAdvertisingEnableCommand.Set {
        let duration = parameters.duration.map { duration -> UInt16 in
            let units = duration / .milliseconds(10)
            return UInt16(clamping: Int(units.rounded(.up)))
        } ?? 0
        return .init(advertisingHandle: handle, duration: duration, maxExtendedAdvertisingEvents: parameters.maximumEvents ?? 0)
    }

    /// The legacy parameters for a controller without extended advertising, when these
    /// parameters can be met with legacy advertising; `nil` otherwise.
    var legacyFallback: AdvertisingParameters? {
        guard data.count <= AdvertisingData.legacyMaximumLength, scanResponse.count <= AdvertisingData.legacyMaximumLength,
              parameters.primaryPHY == .le1M, parameters.duration == nil, parameters.maximumEvents == nil,
              parameters.intervalRange.upperBound <= UInt32(AdvertisingParameters.intervalLimits.upperBound) else { return nil }
        var legacy = AdvertisingParameters(
            intervalRange: UInt16(parameters.intervalRange.lowerBound)...UInt16(parameters.intervalRange.upperBound),
            isConnectable: parameters.isConnectable, isScannable: parameters.hasScanResponse)
        legacy.ownAddressType = parameters.ownAddressType
        legacy.channelMap = parameters.channelMap
        legacy.filterPolicy = parameters.filterPolicy
        return legacy
    }
}

/// The advertising sets this host runs. A plain state machine: the host sends the commands.
struct AdvertisingSetsState: Sendable {
    /// The sets created and not removed, enabled or not.
    private(set) var sets: [UInt8: AdvertisingSetConfiguration] = [:]
    /// The sets the controller is advertising now.
    private(set) var enabled: Set<UInt8> = []
    /// What the controller said about itself, read once when the first set starts.
    var maximumDataLength: Int?
    var supportedSetCount: Int?
    /// The set ``LEHost/startAdvertising(_:scanResponse:parameters:)`` runs on with legacy PDUs
    /// (a controller driven with the extended commands): not one of the app's sets, but its
    /// handle is taken.
    var legacyAdvertisingHandle: UInt8?
    /// Starting and stopping run one at a time.
    let gate = AsyncSerialGate()

    /// The lowest handle not in use, if the controller has room for another set.
    func freeHandle() -> UInt8? {
        let limit = min(supportedSetCount ?? 1, Int(LESetExtendedAdvertisingParametersCommand.maximumHandle) + 1)
        return (0..<limit).lazy.map { UInt8($0) }.first { sets[$0] == nil && $0 != legacyAdvertisingHandle }
    }

    mutating func didStart(_ configuration: AdvertisingSetConfiguration) {
        sets[configuration.handle] = configuration
        enabled.insert(configuration.handle)
    }

    mutating func didRemove(_ handle: UInt8) {
        sets[handle] = nil
        enabled.remove(handle)
    }

    mutating func didRemoveAll() {
        sets.removeAll()
        enabled.removeAll()
    }

    /// The controller stopped a set on its own (LE Advertising Set Terminated). The host
    /// forgets it: its handle is free again, and setting the parameters of a disabled set
    /// replaces them (Core 6.0, Vol 4, Part E, 7.8.53). Returns whether the set was this host's.
    mutating func didTerminate(_ handle: UInt8) -> Bool {
        guard sets[handle] != nil, enabled.contains(handle) else { return false }
        didRemove(handle)
        return true
    }
}
