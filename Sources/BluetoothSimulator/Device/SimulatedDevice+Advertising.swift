import BluetoothCore
import BluetoothHost
import BluetoothPeripheral

extension SimulatedDevice {
    /// Advertises as the declaration says (see ``SimulatedPeripheral``).
    public func startAdvertising() async throws(SimulatorError) {
        var parameters = AdvertisingParameters(intervalRange: declaration.advertisingIntervalUnits...declaration.advertisingIntervalUnits,
                                               isConnectable: declaration.isConnectable, isScannable: true,
                                               restartsAfterDisconnection: declaration.advertisesAgainAfterDisconnection)
        parameters.ownAddressType = .public
        do {
            if let data = declaration.advertisingData, declaration.usesExtendedAdvertising {
                let units = UInt32(declaration.advertisingIntervalUnits)
                let scanResponse = declaration.isConnectable ? nil : declaration.scanResponse
                _ = try await manager.startAdvertisingSet(data, scanResponse: scanResponse, parameters: ExtendedAdvertisingParameters(
                    intervalRange: units...units, isConnectable: declaration.isConnectable, isScannable: scanResponse != nil))
                return
            }
            if let data = declaration.advertisingData {
                try await manager.startAdvertising(data, scanResponse: declaration.scanResponse, parameters: parameters)
                return
            }
            let options = PeripheralAdvertisingOptions(parameters: parameters, additionalFields: declaration.additionalAdvertisingFields)
            try await manager.startAdvertising(name: declaration.name, serviceUUIDs: try advertisedUUIDs(options: options), options: options)
        } catch {
            throw .peripheral(error)
        }
    }

    /// Stops advertising (a connected central stays connected).
    public func stopAdvertising() async throws(SimulatorError) {
        do {
            try await manager.stopAdvertising()
            try await manager.stopAllAdvertisingSets()
        } catch {
            throw .peripheral(error)
        }
    }

    /// Whether it advertises now.
    public var isAdvertising: Bool {
        get async {
            let sets = await manager.activeAdvertisingSets
            return await manager.isAdvertising || !sets.isEmpty
        }
    }

    /// The declared UUIDs, or as many primary service UUIDs as fit beside the flags and the
    /// additional fields (16-bit ones first).
    private func advertisedUUIDs(options: PeripheralAdvertisingOptions) throws(PeripheralError) -> [BluetoothUUID] {
        if let declared = declaration.advertisedServiceUUIDs { return declared }
        let primary = declaration.services.filter(\.isPrimary).map(\.uuid)
        let ordered = primary.filter { $0.uint16 != nil } + primary.filter { $0.uint16 == nil }
        var chosen: [BluetoothUUID] = []
        for uuid in ordered {
            let candidate = chosen + [uuid]
            let fields = [ADField.flags(.leOnlyGeneralDiscoverable)] + ADField.serviceUUIDs(candidate, complete: true) + options.additionalFields
            if AdvertisingData(fields).encodedLength <= AdvertisingData.legacyMaximumLength { chosen = candidate }
        }
        return chosen
    }
}
