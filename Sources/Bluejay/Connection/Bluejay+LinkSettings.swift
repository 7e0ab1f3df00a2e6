import BluetoothHost

/// PHY, data length and connection parameters of the connected peripheral, with callbacks.
/// Each is queued like a GATT request; a refusal by the controller or the peripheral is
/// ``BluejayError/host(_:)`` with ``BluetoothHost/HostError/linkProcedureRefused(_:)``.
///
/// ```swift
/// bluejay.setPHY(.le2M) { result in print(result) }                  // .success(LE 2M)
/// bluejay.setDataLength { result in print(result) }                  // the controller's maximum
/// bluejay.requestConnectionParameters(.lowLatency) { result in print(result) }
/// ```
extension Bluejay {
    /// Asks for other PHYs on the connection (LE Set PHY); `completion` gets the PHYs in effect.
    public func setPHY(_ preference: PHYPreference, completion: @escaping @Sendable (Result<ConnectionPHY, BluejayError>) -> Void) {
        submitGATT("set PHY \(preference)", work: { link in try await link.linkSetting("setting the PHY") { try await $0.setPHY(preference) } },
                   deliver: onCallbackQueue(completion))
    }

    /// Asks for longer LL data PDUs (LE Set Data Length); `nil` asks for the controller's
    /// maximum. `completion` gets the data length in effect.
    public func setDataLength(octets: UInt16? = nil, completion: @escaping @Sendable (Result<DataLength, BluejayError>) -> Void) {
        submitGATT("set data length", work: { link in
            try await link.linkSetting("setting the data length") { try await $0.setDataLength(octets: octets, time: nil) }
        }, deliver: onCallbackQueue(completion))
    }

    /// Asks for connection parameters (a preset such as `BluetoothHost/ConnectionParameterPreference/lowLatency`,
    /// or values); `completion` gets the parameters in effect once they apply.
    public func requestConnectionParameters(_ preference: ConnectionParameterPreference,
                                            completion: @escaping @Sendable (Result<ConnectionParameters, BluejayError>) -> Void) {
        submitGATT("request connection parameters \(preference)", work: { link in
            try await link.linkSetting("updating the connection parameters") { try await $0.updateParameters(preference) }
        }, deliver: onCallbackQueue(completion))
    }
}
