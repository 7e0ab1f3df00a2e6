/// The two families of LE advertising, scanning and initiating commands. A controller refuses
/// a command of one family with Command Disallowed once the host used the other since the
/// last reset (Core 6.0, Vol 4, Part E, 3.1.1), so a host picks one per controller, at
/// power-on, and keeps to it: ``ControllerInfo/commandFamily``.
public enum LECommandFamily: Sendable, Hashable, CustomStringConvertible {
    /// LE Set Advertising Parameters, Data, Scan Response Data and Enable, LE Read Advertising
    /// Physical Channel Tx Power, LE Set Scan Parameters and Enable, LE Create Connection.
    case legacy
    /// Advertising sets (LE Set Extended Advertising Parameters, Data, Scan Response Data and
    /// Enable, LE Set Advertising Set Random Address, LE Remove and Clear Advertising Sets, LE
    /// Read Maximum Advertising Data Length, LE Read Number of Supported Advertising Sets), LE
    /// Set Extended Scan Parameters and Enable, LE Extended Create Connection. Legacy
    /// advertising runs on an advertising set with legacy PDUs.
    case extended

    /// The commands of the legacy family (Core 6.0, Vol 4, Part E, 3.1.1).
    public static let legacyOpcodes: Set<HCIOpcode> = [
        LESetAdvertisingParametersCommand.opcode, LEReadAdvertisingPhysicalChannelTxPowerCommand.opcode,
        LESetAdvertisingDataCommand.opcode, LESetScanResponseDataCommand.opcode, LESetAdvertisingEnableCommand.opcode,
        LESetScanParametersCommand.opcode, LESetScanEnableCommand.opcode, LECreateConnectionCommand.opcode,
    ]

    /// The commands of the extended family this stack knows (Core 6.0, Vol 4, Part E, 3.1.1;
    /// the periodic advertising and synchronization commands belong to it too).
    public static let extendedOpcodes: Set<HCIOpcode> = [
        LESetAdvertisingSetRandomAddressCommand.opcode, LESetExtendedAdvertisingParametersCommand.opcode,
        LESetExtendedAdvertisingDataCommand.opcode, LESetExtendedScanResponseDataCommand.opcode,
        LESetExtendedAdvertisingEnableCommand.opcode, LEReadMaximumAdvertisingDataLengthCommand.opcode,
        LEReadNumberOfSupportedAdvertisingSetsCommand.opcode, LERemoveAdvertisingSetCommand.opcode,
        LEClearAdvertisingSetsCommand.opcode, LESetExtendedScanParametersCommand.opcode,
        LESetExtendedScanEnableCommand.opcode, LEExtendedCreateConnectionCommand.opcode,
    ]

    /// The family a command belongs to, `nil` for the commands of neither.
    public init?(opcode: HCIOpcode) {
        if Self.legacyOpcodes.contains(opcode) {
            self = .legacy
        } else if Self.extendedOpcodes.contains(opcode) {
            self = .extended
        } else {
            return nil
        }
    }

    public var description: String {
        switch self {
        case .legacy: return "legacy advertising, scanning and connecting commands"
        case .extended: return "extended advertising, scanning and connecting commands"
        }
    }
}
