import GATTProfiles

extension Bluejay {
    /// Discovers the connected peripheral's whole database (queued like every request) and
    /// names what it finds from `registry` (the shipped profiles unless told), falling back on
    /// the Bluetooth SIG names. `timeout` replaces the operation time limit (``Timeout/none``:
    /// no limit).
    public func discoverServices(naming registry: ProfileRegistry = .standard, timeout: Timeout? = nil,
                                 completion: @escaping @Sendable (ReadResult<[DiscoveredService]>) -> Void) {
        submitGATT("discover services", timeout: timeout, work: { link in
            try await link.connection.discoverDatabase().named(by: registry)
        }, deliver: onCallbackQueue(completion))
    }

    /// Discovers and names the connected peripheral's database; see
    /// ``discoverServices(naming:timeout:completion:)``.
    public func discoverServices(naming registry: ProfileRegistry = .standard,
                                 timeout: Timeout? = nil) async throws(BluejayError) -> [DiscoveredService] {
        try await performGATT("discover services", timeout: timeout) { link in
            try await link.connection.discoverDatabase().named(by: registry)
        }
    }
}

extension RemotePeripheral {
    /// Discovers the peripheral's whole database and names what it finds from `registry`;
    /// see ``Bluejay/discoverServices(naming:timeout:)``.
    public func discoverServices(naming registry: ProfileRegistry = .standard,
                                 timeout: Timeout? = nil) async throws(BluejayError) -> [DiscoveredService] {
        try await perform("discover services", timeout: timeout) { link in
            try await link.connection.discoverDatabase().named(by: registry)
        }
    }
}
