import BluetoothCore

/// LE Set Scan Parameters (Core 6.0, Vol 4, Part E, 7.8.10): legacy scanning.
public struct LESetScanParametersCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000B)
    public static let name = "LE Set Scan Parameters"

    public var scanType: LEScanType
    /// In units of 0.625 ms, 0x0004...0x4000.
    public var scanInterval: UInt16
    /// In units of 0.625 ms, no larger than the interval.
    public var scanWindow: UInt16
    public var ownAddressType: OwnAddressType
    public var filterPolicy: ScanningFilterPolicy

    public init(scanType: LEScanType, scanInterval: UInt16, scanWindow: UInt16,
                ownAddressType: OwnAddressType = .public, filterPolicy: ScanningFilterPolicy = .basicUnfiltered) {
        self.scanType = scanType
        self.scanInterval = scanInterval
        self.scanWindow = scanWindow
        self.ownAddressType = ownAddressType
        self.filterPolicy = filterPolicy
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        scanType = try reader.readEnum(field: "LE_Scan_Type")
        scanInterval = try reader.readUInt16()
        scanWindow = try reader.readUInt16()
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        filterPolicy = try reader.readEnum(field: "Scanning_Filter_Policy")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(scanType.rawValue)
        writer.write(scanInterval)
        writer.write(scanWindow)
        writer.write(ownAddressType.rawValue)
        writer.write(filterPolicy.rawValue)
    }
}

/// LE Set Scan Enable (Core 6.0, Vol 4, Part E, 7.8.11): starts or stops legacy scanning.
public struct LESetScanEnableCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x000C)
    public static let name = "LE Set Scan Enable"

    public var enable: Bool
    public var filterDuplicates: Bool

    public init(enable: Bool, filterDuplicates: Bool) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        enable = try reader.readBool(field: "LE_Scan_Enable")
        filterDuplicates = try reader.readBool(field: "Filter_Duplicates")
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
        writer.write(filterDuplicates)
    }
}

/// LE Set Extended Scan Parameters (Core 6.0, Vol 4, Part E, 7.8.64): scanning on the LE 1M
/// and/or LE Coded primary PHYs. The Scanning_PHYs bit field is derived from which of
/// ``le1M`` and ``leCoded`` are present; their parameter sets follow it in bit order.
public struct LESetExtendedScanParametersCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0041)
    public static let name = "LE Set Extended Scan Parameters"

    /// The parameters of scanning on one PHY.
    public struct PHYParameters: Sendable, Equatable {
        public var scanType: LEScanType
        /// In units of 0.625 ms, 0x0004...0xFFFF.
        public var scanInterval: UInt16
        /// In units of 0.625 ms, no larger than the interval.
        public var scanWindow: UInt16

        public init(scanType: LEScanType, scanInterval: UInt16, scanWindow: UInt16) {
            self.scanType = scanType
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
        }

        init(reading reader: inout ByteReader) throws(PacketDecodingError) {
            scanType = try reader.readEnum(field: "Scan_Type")
            scanInterval = try reader.readUInt16()
            scanWindow = try reader.readUInt16()
        }

        func write(to writer: inout ByteWriter) {
            writer.write(scanType.rawValue)
            writer.write(scanInterval)
            writer.write(scanWindow)
        }
    }

    public var ownAddressType: OwnAddressType
    public var filterPolicy: ScanningFilterPolicy
    /// Scanning on LE 1M, if any.
    public var le1M: PHYParameters?
    /// Scanning on LE Coded, if any.
    public var leCoded: PHYParameters?

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

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        ownAddressType = try reader.readEnum(field: "Own_Address_Type")
        filterPolicy = try reader.readEnum(field: "Scanning_Filter_Policy")
        let phys = LEPhySet(rawValue: try reader.readUInt8())
        // Only LE 1M and LE Coded can be scanned; bit 1 (LE 2M) is reserved for scanning.
        guard !phys.isEmpty, phys.isSubset(of: [.le1M, .leCoded]) else {
            throw .invalidValue(context: reader.context, field: "Scanning_PHYs", value: UInt64(phys.rawValue))
        }
        le1M = phys.contains(.le1M) ? try PHYParameters(reading: &reader) : nil
        leCoded = phys.contains(.leCoded) ? try PHYParameters(reading: &reader) : nil
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(ownAddressType.rawValue)
        writer.write(filterPolicy.rawValue)
        writer.write(scanningPHYs.rawValue)
        le1M?.write(to: &writer)
        leCoded?.write(to: &writer)
    }
}

/// LE Set Extended Scan Enable (Core 6.0, Vol 4, Part E, 7.8.65).
public struct LESetExtendedScanEnableCommand: HCICommand {
    public static let opcode = HCIOpcode(group: HCIOpcode.leController, command: 0x0042)
    public static let name = "LE Set Extended Scan Enable"

    public var enable: Bool
    public var filterDuplicates: ExtendedScanFilterDuplicates
    /// In units of 10 ms; 0 scans until disabled.
    public var duration: UInt16
    /// In units of 1.28 s; 0 scans continuously.
    public var period: UInt16

    public init(enable: Bool, filterDuplicates: ExtendedScanFilterDuplicates = .disabled, duration: UInt16 = 0, period: UInt16 = 0) {
        self.enable = enable
        self.filterDuplicates = filterDuplicates
        self.duration = duration
        self.period = period
    }

    public init(parameters reader: inout ByteReader) throws(PacketDecodingError) {
        enable = try reader.readBool(field: "Enable")
        filterDuplicates = try reader.readEnum(field: "Filter_Duplicates")
        duration = try reader.readUInt16()
        period = try reader.readUInt16()
    }

    public func encodeParameters(into writer: inout ByteWriter) {
        writer.write(enable)
        writer.write(filterDuplicates.rawValue)
        writer.write(duration)
        writer.write(period)
    }
}
