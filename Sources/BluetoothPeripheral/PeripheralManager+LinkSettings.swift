import BluetoothCore
import BluetoothHost

/// PHY, data length and connection parameters of a connected central's link, asked for from
/// the peripheral's side: the PHY and data length through the controller, the parameters
/// through an L2CAP Connection Parameter Update Request that the central accepts or refuses
/// (a refusal is ``BluetoothHost/HostError/linkProcedureRefused(_:)``).
///
/// ```swift
/// let parameters = try await manager.requestConnectionParameters(.lowPower, for: central)
/// ```
extension PeripheralManager {
    /// Asks for other PHYs on the central's link; returns the PHYs in effect.
    public func setPHY(_ preference: PHYPreference, for central: Central) async throws(PeripheralError) -> ConnectionPHY {
        let connection = try await connection(of: central)
        do {
            return try await connection.setPHY(preference)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// Asks for longer LL data PDUs on the central's link (`nil`: the controller's maximum).
    public func setDataLength(octets: UInt16? = nil, for central: Central) async throws(PeripheralError) -> DataLength {
        let connection = try await connection(of: central)
        do {
            return try await connection.setDataLength(octets: octets)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// Asks the central for connection parameters (a preset or values); returns them once
    /// they apply.
    public func requestConnectionParameters(_ preference: ConnectionParameterPreference, for central: Central) async throws(PeripheralError) -> ConnectionParameters {
        let connection = try await connection(of: central)
        do {
            return try await connection.updateParameters(preference)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// The PHY, data length and parameter changes of the central's link from now on.
    public func linkUpdates(of central: Central) async throws(PeripheralError) -> AsyncStream<LinkChange> {
        try await connection(of: central).linkUpdates()
    }
}
