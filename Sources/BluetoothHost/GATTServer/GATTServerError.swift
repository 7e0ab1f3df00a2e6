import BluetoothCore

/// Why an operation on this device's GATT server failed.
public enum GATTServerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The definition breaks a rule of the specification; the text says which.
    case invalidDefinition(String)
    /// An included service is not published.
    case includedServiceNotFound(BluetoothUUID)
    /// The database has no room left: handles end at 0xFFFF (Core 6.0, Vol 3, Part F, 3.2.2).
    case databaseFull(needed: Int)
    /// No published service starts at this handle.
    case unknownService(UInt16)
    /// No characteristic value (or descriptor) has this handle.
    case unknownAttribute(UInt16)
    /// The GAP and GATT services are always present (Core 6.0, Vol 3, Part G, 7).
    case mandatoryService(BluetoothUUID)
    /// Another published service includes this one; remove that one first.
    case serviceIsIncluded(BluetoothUUID, by: BluetoothUUID)
    /// The value is longer than the attribute allows.
    case valueTooLong(length: Int, maximum: Int)
    /// The characteristic does not have the property the operation needs (notify, indicate).
    case notPermitted(String)
    /// The client has not enabled notifications or indications of the characteristic.
    case notSubscribed(connectionHandle: UInt16, valueHandle: UInt16)
    /// Too many notifications or indications wait for the controller or for confirmations.
    case queueFull(connectionHandle: UInt16)
    /// The connection is not known to the server, or ended.
    case notConnected(connectionHandle: UInt16)
    /// The client did not confirm an indication within the ATT transaction timeout
    /// (Core 6.0, Vol 3, Part F, 3.3.3); no more indications go to it.
    case indicationTimeout(connectionHandle: UInt16)
    /// The client's link does not have the security a read of the value needs (Core 6.0,
    /// Vol 3, Part C, 10.3.1), so the value is not pushed to it.
    case insufficientSecurity(connectionHandle: UInt16, GATTSecurityRefusal)

    public var description: String {
        switch self {
        case let .invalidDefinition(what): return "invalid service definition: \(what)"
        case let .includedServiceNotFound(uuid): return "the included service \(uuid) is not published; add it first"
        case let .databaseFull(needed): return "the attribute database has no room for \(needed) more attributes (handles end at 0xFFFF)"
        case let .unknownService(handle): return "no published service starts at handle \(hex(handle))"
        case let .unknownAttribute(handle): return "no characteristic value or descriptor has handle \(hex(handle))"
        case let .mandatoryService(uuid): return "the service \(uuid) is mandatory and cannot be removed"
        case let .serviceIsIncluded(uuid, by): return "the service \(uuid) is included by \(by); remove \(by) first"
        case let .valueTooLong(length, maximum): return "a value of \(length) bytes is longer than the \(maximum) the attribute allows"
        case let .notPermitted(what): return "not permitted: \(what)"
        case let .notSubscribed(connection, handle):
            return "connection \(hex(connection)) has not subscribed to the characteristic at \(hex(handle))"
        case let .queueFull(connection): return "the outgoing queue of connection \(hex(connection)) is full; retry when it drains"
        case let .notConnected(connection): return "connection \(hex(connection)) is not connected"
        case let .indicationTimeout(connection):
            return "connection \(hex(connection)) did not confirm an indication within the ATT transaction timeout"
        case let .insufficientSecurity(connection, reason):
            return "the value is not sent to connection \(hex(connection)): \(reason)"
        }
    }

    private func hex(_ value: UInt16) -> String { Hex.format(value, digits: 4) }
}
