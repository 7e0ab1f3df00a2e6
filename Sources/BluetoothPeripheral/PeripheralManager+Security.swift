import BluetoothCore
import BluetoothHost

/// Pairing in the peripheral role: ask a central to pair (a Security Request; the central
/// decides between pairing and encrypting with keys it has), see a link's security, and manage
/// bonds. Characteristics demand security with ``PeripheralCharacteristic/readSecurity`` and
/// ``PeripheralCharacteristic/writeSecurity``; the host answers a central's pairing by itself
/// (with the ``BluetoothHost/PairingAgent`` set here for passkeys and numeric comparison).
extension PeripheralManager {
    /// Sets who answers pairing questions for this peripheral's host.
    public func setPairingAgent(_ agent: any PairingAgent) async {
        await backend.setPairingAgent(agent)
    }

    /// Asks a connected central to pair or to encrypt, and returns the link's security once
    /// it is encrypted. With `authenticated`, the Security Request asks for MITM protection
    /// and a link without it is a typed error (the central's Just Works pairing is refused).
    @discardableResult
    public func pair(_ central: Central, authenticated: Bool = false) async throws(PeripheralError) -> LinkSecurity {
        let connection = try await connection(of: central)
        do {
            return try await requireHost("pairing started by the peripheral").pair(connection, authenticated: authenticated)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    /// The security of a connected central's link.
    public func security(of central: Central) async throws(PeripheralError) -> LinkSecurity {
        try await connection(of: central).security
    }

    /// The bonds of this peripheral's host.
    public func bonds() async -> [Bond] {
        await host?.bonds() ?? []
    }

    /// Forgets the bond with a central (its identity address). Returns whether there was one.
    @discardableResult
    public func removeBond(with central: DeviceAddress) async throws(PeripheralError) -> Bool {
        do {
            return try await requireHost("removing a bond from the peripheral role").removeBond(with: central)
        } catch {
            throw PeripheralError.wrap(error)
        }
    }

    func connection(of central: Central) async throws(PeripheralError) -> Connection {
        guard let connection = await (try requireHost("link control")).connections.first(where: { $0.handle == central.connectionHandle && $0.role == .peripheral }) else {
            throw .host(.notFound("a connection to \(central)"))
        }
        return connection
    }
}
