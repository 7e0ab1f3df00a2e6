import BluetoothHCI

/// A change of a connection's link layer settings, as the controller reported it.
public enum LinkChange: Sendable, Equatable, CustomStringConvertible {
    /// LE PHY Update Complete with a new PHY (Core 6.0, Vol 4, Part E, 7.7.65.12).
    case phy(ConnectionPHY)
    /// LE Data Length Change (7.7.65.7).
    case dataLength(DataLength)
    /// LE Connection Update Complete (7.7.65.3).
    case parameters(ConnectionParameters)

    public var description: String {
        switch self {
        case let .phy(phy): return "PHY \(phy)"
        case let .dataLength(length): return "data length \(length)"
        case let .parameters(parameters): return "parameters \(parameters)"
        }
    }
}

/// A link layer procedure the host runs for the app.
public enum LinkProcedure: String, Sendable, Hashable, CustomStringConvertible {
    case phyUpdate = "the PHY update"
    case dataLengthUpdate = "the data length update"
    case connectionParameterUpdate = "the connection parameter update"

    public var description: String { rawValue }
}

/// Who refused a link layer procedure, and why.
public struct LinkProcedureRefusal: Sendable, Hashable, CustomStringConvertible {
    /// Who said no.
    public enum Refuser: String, Sendable, Hashable {
        /// The local controller (a Command Status or Command Complete with an error, e.g.
        /// Unsupported Feature or Parameter Value, 0x11).
        case controller
        /// The peer (the completion event's status, e.g. Unsupported Remote Feature, 0x1A, or
        /// an L2CAP Connection Parameter Update Response that rejects).
        case peer
    }

    public var procedure: LinkProcedure
    public var refusedBy: Refuser
    /// The status the controller reported (for an L2CAP rejection, Unacceptable Connection
    /// Parameters, 0x3B).
    public var status: HCIStatus

    public init(procedure: LinkProcedure, refusedBy: Refuser, status: HCIStatus) {
        self.procedure = procedure
        self.refusedBy = refusedBy
        self.status = status
    }

    public var description: String { "\(procedure) was refused by the \(refusedBy.rawValue): \(status)" }
}
