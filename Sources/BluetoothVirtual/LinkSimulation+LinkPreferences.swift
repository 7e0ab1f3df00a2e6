import BluetoothCore
import BluetoothHCI

extension LinkSimulation {
    /// LE Set Default PHY (Core 6.0, Vol 4, Part E, 7.8.48): kept as what this controller
    /// offers in every later PHY update.
    mutating func setDefaultPHY(_ command: LESetDefaultPHYCommand, opcode: HCIOpcode, from id: ControllerID) {
        let noTransmitPreference = command.allPHYs.contains(.noTransmitPreference)
        let noReceivePreference = command.allPHYs.contains(.noReceivePreference)
        let supported = controllers[id]?.supportedPHYs ?? .le1M
        // With a preference, at least one PHY, and only PHYs the controller has (7.8.48).
        guard noTransmitPreference || !command.txPHYs.isEmpty, noReceivePreference || !command.rxPHYs.isEmpty else {
            complete(id, opcode, .invalidCommandParameters)
            return
        }
        guard noTransmitPreference || command.txPHYs.isSubset(of: supported),
              noReceivePreference || command.rxPHYs.isSubset(of: supported) else {
            complete(id, opcode, .unsupportedFeatureOrParameter)
            return
        }
        controllers[id]?.defaultPHYs = (noTransmitPreference ? .all : command.txPHYs, noReceivePreference ? .all : command.rxPHYs)
        complete(id, opcode, .success)
    }

    /// LE Read Suggested Default Data Length (7.8.34): what LE Write Suggested Default Data
    /// Length set, 27 octets and 328 µs before.
    mutating func readSuggestedDefaultDataLength(opcode: HCIOpcode, from id: ControllerID) {
        let state = controllers[id]
        complete(id, opcode, returning: LEReadSuggestedDefaultDataLengthCommand.ReturnParameters(
            suggestedMaxTxOctets: state?.suggestedTxOctets ?? 27, suggestedMaxTxTime: state?.suggestedTxTime ?? 328))
    }
}
