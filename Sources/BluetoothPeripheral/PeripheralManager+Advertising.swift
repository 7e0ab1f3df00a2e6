import BluetoothCore
import BluetoothHost

/// How ``PeripheralManager/startAdvertising(name:serviceUUIDs:options:)`` advertises.
public struct PeripheralAdvertisingOptions: Sendable, Hashable {
    public var parameters: AdvertisingParameters
    /// Extra fields: manufacturer data, service data, TX power, appearance…
    public var additionalFields: [ADField]

    public init(parameters: AdvertisingParameters = AdvertisingParameters(), additionalFields: [ADField] = []) {
        self.parameters = parameters
        self.additionalFields = additionalFields
    }
}

extension PeripheralManager {
    /// Advertises a name and service UUIDs, connectable: flags, the complete list of
    /// service UUIDs and the extra fields in the advertising data; the name there too when
    /// it fits, else in the scan response (shortened if even that is too small). The GAP
    /// Device Name becomes `name`.
    ///
    /// Throws ``PeripheralError/advertising(_:)`` when the UUIDs and fields do not fit in
    /// 31 octets.
    public func startAdvertising(name: String, serviceUUIDs: [BluetoothUUID] = [],
                                 options: PeripheralAdvertisingOptions = PeripheralAdvertisingOptions()) async throws(PeripheralError) {
        let (data, scanResponse) = try Self.layout(name: name, serviceUUIDs: serviceUUIDs, options: options)
        await backend.server.setDeviceName(name)
        try await startAdvertising(data, scanResponse: scanResponse, parameters: options.parameters)
    }

    /// Advertises the given data and scan response (see `LEHost/startAdvertising(_:scanResponse:parameters:)`).
    public func startAdvertising(_ data: AdvertisingData, scanResponse: AdvertisingData? = nil,
                                 parameters: AdvertisingParameters = AdvertisingParameters()) async throws(PeripheralError) {
        do {
            try await backend.startAdvertising(data, scanResponse: scanResponse, parameters: parameters)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// Advertises an iBeacon: non-connectable, the beacon alone.
    public func startAdvertising(region: BeaconRegion) async throws(PeripheralError) {
        do {
            try await requireHost("iBeacon advertising").startAdvertising(beacon: region.beacon)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    public func stopAdvertising() async throws(PeripheralError) {
        do {
            try await backend.stopAdvertising()
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    public var isAdvertising: Bool {
        get async { await backend.isAdvertising }
    }

    /// Lays out advertising data and scan response for a name and service UUIDs.
    static func layout(name: String, serviceUUIDs: [BluetoothUUID],
                       options: PeripheralAdvertisingOptions) throws(PeripheralError) -> (AdvertisingData, AdvertisingData?) {
        let limit = AdvertisingData.legacyMaximumLength
        var fields: [ADField] = []
        if options.parameters.isConnectable || options.parameters.isScannable { fields.append(.flags(.leOnlyGeneralDiscoverable)) }
        fields += ADField.serviceUUIDs(serviceUUIDs, complete: true)
        fields += options.additionalFields
        let data = AdvertisingData(fields)
        guard data.encodedLength <= limit else {
            throw .advertising("the service UUIDs and fields need \(data.encodedLength) octets but only \(limit) fit; advertise fewer UUIDs or move fields out")
        }
        let nameBytes = Array(name.utf8)
        if name.isEmpty { return (data, nil) }
        if data.encodedLength + 2 + nameBytes.count <= limit {
            return (AdvertisingData(fields + [.completeLocalName(name)]), nil)
        }
        guard options.parameters.isConnectable || options.parameters.isScannable else {
            throw .advertising("the name does not fit in the advertising data and non-scannable advertising has no scan response")
        }
        if 2 + nameBytes.count <= limit { return (data, AdvertisingData([.completeLocalName(name)])) }
        return (data, AdvertisingData([.shortenedLocalName(Self.prefix(of: name, utf8Count: limit - 2))]))
    }

    /// The longest prefix of whole characters within `utf8Count` octets.
    private static func prefix(of text: String, utf8Count: Int) -> String {
        var result = ""
        for character in text {
            if result.utf8.count + String(character).utf8.count > utf8Count { break }
            result.append(character)
        }
        return result
    }
}
