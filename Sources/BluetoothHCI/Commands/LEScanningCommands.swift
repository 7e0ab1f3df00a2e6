import BluetoothCore

/// LE Set Scan Parameters (Core 6.0, Vol 4, Part E, 7.8.10): legacy scanning.
public struct LESetScanParametersCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000B)
    public static let name = "LE Set Scan Parameters"

    public var scanType: LEScanType = .passive
    /// In units of 0.625 ms, 0x0004...0x4000.
    public var scanInterval: UInt16 = 0
    /// In units of 0.625 ms, no larger than the interval.
    public var scanWindow: UInt16 = 0
    public var ownAddressType: OwnAddressType = .public
    public var filterPolicy: ScanningFilterPolicy = .basicUnfiltered

    public init() {}

    public init(scanType: LEScanType, scanInterval: UInt16, scanWindow: UInt16,
                ownAddressType: OwnAddressType = .public, filterPolicy: ScanningFilterPolicy = .basicUnfiltered) {
        self.scanType = scanType
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&scanType, field: "LE_Scan_Type")
        try coder.uint16(&scanInterval)
        try coder.uint16(&scanWindow)
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.uint8(&filterPolicy, field: "Scanning_Filter_Policy")
    }
}

/// LE Set Scan Enable (Core 6.0, Vol 4, Part E, 7.8.11): starts or stops legacy scanning.
public struct LESetScanEnableCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000C)
    public static let name = "LE Set Scan Enable"

    public var enable: Bool = false
    public var filterDuplicates: Bool = false

    public init() {}

    public init(enable: Bool, filterDuplicates: Bool) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&enable, field: "LE_Scan_Enable")
        try coder.bool(&filterDuplicates, field: "Filter_Duplicates")
    }
}

/// LE Set Extended Scan Parameters (Core 6.0, Vol 4, Part E, 7.8.64): scanning on the LE 1M
/// and/or LE Coded primary PHYs. The Scanning_PHYs bit field is derived from which of
/// ``le1M`` and ``leCoded`` are present; their parameter sets follow it in bit order.
public struct LESetExtendedScanParametersCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0041)
    public static let name = "LE Set Extended Scan Parameters"

    /// The parameters of scanning on one PHY.
    public struct PHYParameters: Sendable, Equatable, PacketFields {
        public var scanType: LEScanType = .passive
        /// In units of 0.625 ms, 0x0004...0xFFFF.
        public var scanInterval: UInt16 = 0
        /// In units of 0.625 ms, no larger than the interval.
        public var scanWindow: UInt16 = 0

        public init() {}

        public init(scanType: LEScanType, scanInterval: UInt16, scanWindow: UInt16) {
            self.scanType = scanType
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
        }

        public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
            try coder.uint8(&scanType, field: "Scan_Type")
            try coder.uint16(&scanInterval)
            try coder.uint16(&scanWindow)
        }
    }

    public var ownAddressType: OwnAddressType = .public
    public var filterPolicy: ScanningFilterPolicy = .basicUnfiltered
    /// Scanning on LE 1M, if any.
    public var le1M: PHYParameters?
    /// Scanning on LE Coded, if any.
    public var leCoded: PHYParameters?

    public init() {}

    public init(ownAddressType: OwnAddressType = .public, filterPolicy: ScanningFilterPolicy = .basicUnfiltered,
                le1M: PHYParameters?, leCoded: PHYParameters? = nil) {
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
        self.le1M = le1M
        self.leCoded = leCoded
    }

    /// The Scanning_PHYs bit field.
    public var scanningPHYs: LEPhySet {
        var phys: LEPhySet = []
        if le1M != nil { phys.insert(.le1M) }
        if leCoded != nil { phys.insert(.leCoded) }
        return phys
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.uint8(&ownAddressType, field: "Own_Address_Type")
        try coder.uint8(&filterPolicy, field: "Scanning_Filter_Policy")
        var phys = scanningPHYs
        try coder.uint8(&phys, field: "Scanning_PHYs")
        // Only LE 1M and LE Coded can be scanned; bit 1 (LE 2M) is reserved for scanning.
        try coder.check(!phys.isEmpty && phys.isSubset(of: [.le1M, .leCoded]), field: "Scanning_PHYs", value: phys.rawValue)
        try coder.optional(&le1M, isPresent: phys.contains(.le1M))
        try coder.optional(&leCoded, isPresent: phys.contains(.leCoded))
    }
}

/// LE Set Extended Scan Enable (Core 6.0, Vol 4, Part E, 7.8.65).
public struct LESetExtendedScanEnableCommand: HCICommand, PacketFields {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0042)
    public static let name = "LE Set Extended Scan Enable"

    public var enable: Bool = false
    public var filterDuplicates: ExtendedScanFilterDuplicates = .disabled
    /// In units of 10 ms; 0 scans until disabled.
    public var duration: UInt16 = 0
    /// In units of 1.28 s; 0 scans continuously.
    public var period: UInt16 = 0

    public init() {}

    public init(enable: Bool, filterDuplicates: ExtendedScanFilterDuplicates = .disabled, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public mutating func fields<C: FieldCoder>(_ coder: inout C) throws(PacketDecodingError) {
        try coder.bool(&enable, field: "Enable")
        try coder.uint8(&filterDuplicates, field: "Filter_Duplicates")
        try coder.uint16(&duration)
        try coder.uint16(&period)
    }
}
