import BluetoothHost

extension SecurityManagerSettings {
    /// These settings with no Repeated Attempts wait (Core 6.0, Vol 3, Part H, 2.3.6), for a
    /// test that pairs again at once after a pairing failed on purpose. The wait itself is
    /// tested on its own.
    public var withoutBackoff: SecurityManagerSettings {
        var settings = self
        settings.initialRetryInterval = .zero
        settings.maximumRetryInterval = .zero
        return settings
    }
}
