import BluetoothHCI

/// The PHYs a connection uses, in each direction (LE Read PHY, LE PHY Update Complete).
public struct ConnectionPHY: Sendable, Hashable, CustomStringConvertible {
    /// The PHY this device transmits on.
    public var tx: LEPhy
    /// The PHY this device receives on.
    public var rx: LEPhy

    public init(tx: LEPhy, rx: LEPhy) {
        self.tx = tx
        self.rx = rx
    }

    /// Every connection starts on LE 1M (Core 6.0, Vol 6, Part B, 4.6.9).
    public static let le1M = ConnectionPHY(tx: .le1M, rx: .le1M)

    public var description: String { tx == rx ? "\(tx)" : "tx \(tx), rx \(rx)" }
}

/// What the host asks for with LE Set PHY (Core 6.0, Vol 4, Part E, 7.8.49): the PHYs it
/// prefers in each direction (`nil`: no preference, the ALL_PHYS bit), and the coding it
/// prefers on LE Coded. The controller and the peer choose among them; the result may be
/// another PHY (the peer may lack 2M or Coded).
///
/// ```swift
/// let phy = try await connection.setPHY(.le2M)   // ConnectionPHY(tx: .le2M, rx: .le2M) when both support it
/// ```
public struct PHYPreference: Sendable, Hashable, CustomStringConvertible {
    /// The PHYs to transmit on, or `nil` for no preference.
    public var transmit: LEPhySet?
    /// The PHYs to receive on, or `nil` for no preference.
    public var receive: LEPhySet?
    /// The coding preferred when transmitting on LE Coded.
    public var codedOptions: LECodedPHYOptions

    public init(transmit: LEPhySet?, receive: LEPhySet?, codedOptions: LECodedPHYOptions = .noPreference) {
        self.transmit = transmit
        self.receive = receive
        self.codedOptions = codedOptions
    }

    /// LE 1M both ways.
    public static let le1M = PHYPreference(transmit: .le1M, receive: .le1M)
    /// LE 2M both ways: twice the bit rate, for throughput.
    public static let le2M = PHYPreference(transmit: .le2M, receive: .le2M)
    /// LE Coded both ways: longer range, an eighth (S=8) or half (S=2) of the bit rate.
    public static let leCoded = PHYPreference(transmit: .leCoded, receive: .leCoded)
    /// LE Coded both ways with a preferred coding.
    public static func leCoded(_ options: LECodedPHYOptions) -> PHYPreference {
        PHYPreference(transmit: .leCoded, receive: .leCoded, codedOptions: options)
    }
    /// No preference either way: the controller chooses.
    public static let any = PHYPreference(transmit: nil, receive: nil)

    /// The ALL_PHYS bits for the directions without a preference.
    public var allPHYs: LEAllPHYsPreference {
        var all: LEAllPHYsPreference = []
        if transmit == nil { all.insert(.noTransmitPreference) }
        if receive == nil { all.insert(.noReceivePreference) }
        return all
    }

    /// Why the preference cannot be sent: an empty set of PHYs in a direction with a
    /// preference (Core 6.0, Vol 4, Part E, 7.8.49), or none.
    var violation: String? {
        if let transmit, transmit.isEmpty { return "no transmit PHY given (use nil for no preference)" }
        if let receive, receive.isEmpty { return "no receive PHY given (use nil for no preference)" }
        return nil
    }

    public var description: String {
        "tx \(transmit.map { "\($0)" } ?? "any") rx \(receive.map { "\($0)" } ?? "any")\(codedOptions == .noPreference ? "" : " \(codedOptions)")"
    }
}
