/// Something a controller lacks and what the host does without it, as ``ControllerInfo``
/// lists them (and the host logs them at power-on): each stands for a class of real
/// controllers the host works with.
public enum ControllerAdaptation: Sendable, Hashable, CustomStringConvertible {
    /// Read BD_ADDR answers 00:00:00:00:00:00 (Zephyr's `hci_uart` on an nRF52840, Bumble given
    /// no address): the host's identity is a static random address, set with LE Set Random
    /// Address, and it advertises, scans and connects with own address type random.
    case noPublicAddress
    /// LE Read Buffer Size reports no LE buffers: LE data shares the BR/EDR ACL buffers, read
    /// with Read Buffer Size (Core 6.0, Vol 4, Part E, 7.8.2).
    case sharedACLBuffers
    /// No LE Read Buffer Size [v2] (a controller before Bluetooth 5.2): the host reads LE
    /// Read Buffer Size [v1].
    case noLEReadBufferSizeV2
    /// No extended advertising, scanning and connecting (a Bluetooth 4.x controller, or one
    /// that lacks some of the commands): the legacy commands, one advertisement of 31 octets
    /// at a time.
    case legacyCommandsOnly
    /// No LE 2M PHY: connections stay on LE 1M.
    case noLE2MPHY
    /// No LE Coded PHY: no long range.
    case noLECodedPHY
    /// The filter accept list holds only this many entries; the host filters in software.
    case smallFilterAcceptList(Int)
    /// The resolving list holds only this many entries; the host resolves bonded peers'
    /// private addresses itself.
    case smallResolvingList(Int)
    /// The controller lists this command but answered it Unknown HCI Command: the host goes on
    /// without it (and no longer sends it).
    case unknownCommand(HCIOpcode)

    public var description: String {
        switch self {
        case .noPublicAddress:
            return "no public address: using a static random address as identity (own address type random)"
        case .sharedACLBuffers:
            return "no dedicated LE buffers: LE data shares the ACL buffers of Read Buffer Size"
        case .noLEReadBufferSizeV2:
            return "no LE Read Buffer Size [v2]: LE buffers read with LE Read Buffer Size [v1]"
        case .legacyCommandsOnly:
            return "no extended advertising, scanning and connecting: legacy commands, one 31-octet advertisement at a time"
        case .noLE2MPHY:
            return "no LE 2M PHY: connections stay on LE 1M"
        case .noLECodedPHY:
            return "no LE Coded PHY: no long range"
        case let .smallFilterAcceptList(size):
            return "filter accept list of \(size) entr\(size == 1 ? "y" : "ies"): the host filters in software"
        case let .smallResolvingList(size):
            return "resolving list of \(size) entr\(size == 1 ? "y" : "ies"): the host resolves private addresses itself"
        case let .unknownCommand(opcode):
            return "\(opcode) answered Unknown HCI Command though listed: going on without it"
        }
    }
}
