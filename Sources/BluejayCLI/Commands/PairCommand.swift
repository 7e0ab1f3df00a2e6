import ArgumentParser
import BluetoothCore
import BluetoothHost

/// `bluejay pair`: connect, pair (and bond), print what the link got.
struct PairCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pair",
        abstract: "Pair and bond with a peripheral.",
        discussion: """
        Connects, pairs (LE Secure Connections when the peripheral has it, else legacy pairing) \
        and stores the bond, then disconnects. With --io display/keyboard/yesno the passkey or \
        number is shown or asked for on the terminal; --passkey N and --yes answer for scripts. \
        Later read, write and listen commands encrypt with the stored keys.
        """)

    @OptionGroup var common: CommonOptions
    @OptionGroup var peripheral: PeripheralOptions
    @OptionGroup var security: SecurityOptions

    mutating func run() async throws {
        try await runReportingErrors {
            let output = Output(json: common.json)
            let (peripheral, security) = (peripheral, security)
            let (peer, result) = try await HostSession.runCentral(common, security: security) { host in
                let connection = try await host.connect(peripheral)
                let result = try await connection.pair(authenticated: security.mitm)
                try await connection.disconnect(reason: .remoteUserTerminatedConnection)
                return (connection.peer, result)
            }
            output.emit(["peripheral": .string(peer.description), "encrypted": .bool(result.isEncrypted),
                         "authenticated": .bool(result.isAuthenticated), "secureConnections": .bool(result.isSecureConnections),
                         "keySize": .int(result.keySize), "bonded": .bool(result.isBonded)],
                        line: "paired with \(peer): \(result)")
        }
    }
}

/// `bluejay bonds`: list the stored bonds, or remove one.
struct BondsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonds", abstract: "List the stored bonds, or remove one (and its cached GATT database) with --remove ADDRESS.")

    @Option(name: .long, help: "Remove the bond with this peer address.") var remove: String?
    @Flag(name: .long, help: "The address to remove is a random one.") var random = false
    @Flag(name: .long, help: "Print one JSON object per line instead of a table.") var json = false
    @Option(name: .long, help: "Where bonds are kept (see `bluejay pair --help`).") var bondDirectory: String?

    mutating func run() async throws {
        var security = SecurityOptions()
        security.bondDirectory = bondDirectory
        let (remove, random, json) = (remove, random, json)
        try await runReportingErrors {
            HostSession.bootstrapLogging(verbose: false)
            let store = FileBondStore(directory: security.directory, logger: .init(label: "bluejay"))
            let output = Output(json: json)
            if let remove {
                guard let address = BluetoothAddress(remove) else {
                    throw CLIError.usage("\"\(remove)\" is not a Bluetooth address (expected six hex bytes like C0:FF:EE:00:11:22)")
                }
                let peer = DeviceAddress(address, type: random ? .random : .public)
                var removed = false
                for bond in await store.bonds() where bond.peerIdentity == peer {
                    removed = try await store.removeBond(local: bond.localIdentity, peer: peer) || removed
                }
                guard removed else { throw CLIError.notFound("no bond with \(peer)") }
                // The peer's cached GATT database goes with its bond: a host that forgot the peer
                // rediscovers it (the cache sits beside the bonds, see HostConfiguration).
                let cache = FileGATTDatabaseCache(directory: FileGATTDatabaseCache.defaultDirectory(bondDirectory: security.directory),
                                                  logger: .init(label: "bluejay"))
                await cache.removeDatabase(for: peer)
                output.emit(["removed": .string(peer.description)], line: "removed the bond with \(peer)")
                return
            }
            let bonds = await store.bonds().sorted { $0.peerIdentity.description < $1.peerIdentity.description }
            if bonds.isEmpty && !json { Output.error("no bonds in \(security.directory)") }
            for bond in bonds {
                output.emit(["peer": .string(bond.peerIdentity.description), "local": .string(bond.localIdentity.description),
                             "keySize": .int(bond.keySize), "authenticated": .bool(bond.isAuthenticated),
                             "secureConnections": .bool(bond.isSecureConnections),
                             "irk": .bool(bond.peerKeys.identityResolvingKey != nil), "csrk": .bool(bond.peerKeys.signatureKey != nil)],
                            line: "\(bond.peerIdentity)  \(bond.keySize * 8)-bit \(bond.isAuthenticated ? "authenticated" : "unauthenticated")"
                                + "\(bond.isSecureConnections ? " LE Secure Connections" : " legacy")  (local \(bond.localIdentity))")
            }
        }
    }
}
