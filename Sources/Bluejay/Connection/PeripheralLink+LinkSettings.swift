import BluetoothHost

extension PeripheralLink {
    /// Runs a link layer request of the connection, its errors made ``BluejayError``s.
    func linkSetting<T: Sendable>(_ operation: String, _ body: @Sendable (any CentralConnection) async throws -> T) async throws -> T {
        do {
            return try await body(connection)
        } catch {
            throw BluejayError(error, peripheral: identifier, operation: operation)
        }
    }
}
