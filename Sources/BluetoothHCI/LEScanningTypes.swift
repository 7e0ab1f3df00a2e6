/// The LE_Scan_Type of scanning commands (Core 6.0, Vol 4, Part E, 7.8.10).
public enum LEScanType: UInt8, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Listen only; send no scan requests.
    case passive = 0x00
    /// Send scan requests to scannable advertisers.
    case active = 0x01

    public var description: String { self == .passive ? "passive" : "active" }
}

/// The Scanning_Filter_Policy of scanning commands (Core 6.0, Vol 4, Part E, 7.8.10).
public enum ScanningFilterPolicy: UInt8, Sendable, Hashable, CaseIterable {
    /// Accept all advertising packets except directed ones not addressed to this device.
    case basicUnfiltered = 0x00
    /// Accept only advertisers in the Filter Accept List.
    case basicFiltered = 0x01
    /// As basic unfiltered, but also report directed advertising with an unresolved RPA target.
    case extendedUnfiltered = 0x02
    /// As basic filtered, but also report directed advertising with an unresolved RPA target.
    case extendedFiltered = 0x03
}

/// The Initiator_Filter_Policy of LE Create Connection (Core 6.0, Vol 4, Part E, 7.8.12).
public enum InitiatorFilterPolicy: UInt8, Sendable, Hashable, CaseIterable {
    /// Connect to the peer address given in the command.
    case usePeerAddress = 0x00
    /// Connect to any device in the Filter Accept List; the peer address is ignored.
    case useFilterAcceptList = 0x01
}

/// The Filter_Duplicates of LE Set Extended Scan Enable (Core 6.0, Vol 4, Part E, 7.8.65).
public enum ExtendedScanFilterDuplicates: UInt8, Sendable, Hashable, CaseIterable {
    case disabled = 0x00
    case enabled = 0x01
    /// Filter duplicates, forgetting them at the start of each scan period.
    case resetEachPeriod = 0x02
}
