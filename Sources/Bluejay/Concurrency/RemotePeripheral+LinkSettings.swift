import BluetoothHost

/// PHY, data length and connection parameters of the link, `async`. Each request is queued
/// like a GATT request and bounded by the operation time limit.
///
/// ```swift
/// let phy = try await peripheral.setPHY(.le2M)
/// let length = try await peripheral.setDataLength()          // the controller's maximum
/// let parameters = try await peripheral.requestConnectionParameters(.lowPower)
/// for await change in peripheral.linkUpdates() { print(change) }
/// ```
extension RemotePeripheral {
    /// The PHYs in effect.
    public var phy: ConnectionPHY { link.connection.phy }
    /// The longest LL data PDUs each way.
    public var dataLength: DataLength { link.connection.dataLength }
    /// The connection parameters in effect.
    public var connectionParameters: ConnectionParameters { link.connection.parameters }

    /// Asks for other PHYs (LE Set PHY) and returns the PHYs in effect; a refusal by the
    /// controller or the peripheral is `BluetoothHost/HostError/linkProcedureRefused(_:)`
    /// inside ``BluejayError/host(_:)``.
    public func setPHY(_ preference: PHYPreference) async throws(BluejayError) -> ConnectionPHY {
        try await perform("set PHY \(preference)") { link in try await link.linkSetting("setting the PHY") { try await $0.setPHY(preference) } }
    }

    /// Asks for longer LL data PDUs; `nil` asks for the controller's maximum.
    public func setDataLength(octets: UInt16? = nil) async throws(BluejayError) -> DataLength {
        try await perform("set data length") { link in
            try await link.linkSetting("setting the data length") { try await $0.setDataLength(octets: octets, time: nil) }
        }
    }

    /// Asks for connection parameters, a preset or values; returns them once they apply.
    public func requestConnectionParameters(_ preference: ConnectionParameterPreference) async throws(BluejayError) -> ConnectionParameters {
        try await perform("request connection parameters \(preference)") { link in
            try await link.linkSetting("updating the connection parameters") { try await $0.updateParameters(preference) }
        }
    }

    /// The PHY, data length and parameter changes from now on; ends with the connection.
    public func linkUpdates() -> AsyncStream<LinkChange> { link.connection.linkUpdates() }
}
