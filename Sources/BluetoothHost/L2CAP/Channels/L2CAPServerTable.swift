import BluetoothCore
import BluetoothHCI
import Synchronization

/// A PSM server registered with ``LEHost/listen(psm:parameters:security:minimumKeySize:accept:)``.
public struct L2CAPServer: Sendable, Hashable {
    /// The SPSM peers open channels to.
    public let psm: UInt16
    public let parameters: L2CAPChannelParameters
    /// What the link must have before a channel is accepted.
    public let security: L2CAPChannelSecurity
    /// The shortest encryption key, in octets (7…16), a link needs when ``security`` asks for
    /// encryption.
    public let minimumKeySize: Int
}

/// The PSM servers of the host, for every link (each link's channels are its
/// ``L2CAPLink``'s): registered and looked up by the host actor.
final class L2CAPServerTable: Sendable {
    struct Server: Sendable {
        var registration: L2CAPServer
        var accept: @Sendable (L2CAPChannel) -> Void
    }

    private let servers = Mutex<[UInt16: Server]>([:])

    /// Dynamically allocated SPSMs (Core 6.0, Vol 3, Part A, 4.22; Assigned Numbers 5.1).
    static let dynamicPSMs: ClosedRange<UInt16> = 0x0080...0x00FF
    /// SPSMs a channel may be opened to (the fixed, SIG-assigned ones and the dynamic ones).
    static let validPSMs: ClosedRange<UInt16> = 0x0001...0x00FF

    func add(psm: UInt16?, parameters: L2CAPChannelParameters, security: L2CAPChannelSecurity, minimumKeySize: Int,
             accept: @escaping @Sendable (L2CAPChannel) -> Void) throws(L2CAPChannelError) -> L2CAPServer {
        let result = servers.withLock { servers -> Result<L2CAPServer, L2CAPChannelError> in
            let chosen: UInt16
            if let psm {
                guard Self.validPSMs.contains(psm) else { return .failure(.invalidArgument("SPSM \(Hex.format(psm)) is outside 0x01…0xFF")) }
                guard servers[psm] == nil else { return .failure(.psmInUse(psm)) }
                chosen = psm
            } else {
                guard let free = Self.dynamicPSMs.first(where: { servers[$0] == nil }) else { return .failure(.noResources) }
                chosen = free
            }
            let server = L2CAPServer(psm: chosen, parameters: parameters, security: security, minimumKeySize: minimumKeySize)
            servers[chosen] = Server(registration: server, accept: accept)
            return .success(server)
        }
        return try result.get()
    }

    func remove(psm: UInt16) {
        servers.withLock { _ = $0.removeValue(forKey: psm) }
    }

    func server(psm: UInt16) -> Server? {
        servers.withLock { $0[psm] }
    }

    var registrations: [L2CAPServer] {
        servers.withLock { $0.values.map(\.registration).sorted { $0.psm < $1.psm } }
    }
}
