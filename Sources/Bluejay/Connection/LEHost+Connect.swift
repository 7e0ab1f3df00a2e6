import BluetoothHost

extension CentralBackend {
    /// Connects to `peripheral` with Bluejay's errors. The host answers as soon as the timeout
    /// passes or the calling task is cancelled (``BluejayError/connectionTimedOut(_:)``,
    /// ``BluejayError/cancelled``), and closes a link that comes up after that.
    func connect(to peripheral: PeripheralIdentifier, timeout: Timeout) async throws(BluejayError) -> any CentralConnection {
        do {
            return try await openConnection(to: peripheral.address, timeout: timeout.duration)
        } catch {
            throw BluejayError(error, peripheral: peripheral, operation: "connecting to \(peripheral)")
        }
    }
}
