import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import Foundation
import Logging
import Testing

extension InteropSuites {
    /// GATT caching against Bumble (Core 6.0, Vol 3, Part G, 2.5.2): Bumble's GATT service has
    /// Service Changed, Client Supported Features and a Database Hash it computes on each read
    /// (bumble/profiles/gatt_service.py), so our client's cache is checked against an
    /// independent server; and a Bumble client reads our robust-caching server.
    @Suite("GATT caching against Bumble")
    struct GATTCachingInteropTests {
        static let hostile = ["--plugin", "bluejay_hostile"]
        static let added = BluetoothUUID("6E400101-B5A3-F393-E0A9-E50E24DCCA9E")
        /// The opcodes of discovery requests: Find Information, Find By Type Value, Read By
        /// Group Type (Read By Type is checked by its attribute type).
        static let discoveryOpcodes: Set<UInt8> = [0x04, 0x06, 0x10]

        /// The attribute types of Read By Type Requests among `pdus` (ATT, client to server).
        static func readByTypeTypes(_ pdus: [[UInt8]]) -> [UInt16] {
            pdus.compactMap { pdu in pdu.count == 7 && pdu[0] == 0x08 ? UInt16(pdu[5]) | UInt16(pdu[6]) << 8 : nil }
        }

        /// The hash our algorithm gives a database as discovered (declarations rebuilt from
        /// what discovery found; descriptors count by handle and type).
        static func hash(of database: [GATTDiscoveredService]) -> GATTDatabaseHash {
            var attributes: [GATTDatabaseHash.Attribute] = []
            for service in database {
                attributes.append(.init(handle: service.service.handleRange.lowerBound, type: GATTAttributeType.primaryService,
                                        value: service.service.uuid.attBytes))
                for included in service.includedServices {
                    var value = RawATT.le(included.service.handleRange.lowerBound) + RawATT.le(included.service.handleRange.upperBound)
                    if let short = included.service.uuid.uint16 { value += RawATT.le(short) }
                    attributes.append(.init(handle: included.declarationHandle, type: GATTAttributeType.include, value: value))
                }
                for entry in service.characteristics {
                    let characteristic = entry.characteristic
                    attributes.append(.init(handle: characteristic.declarationHandle, type: GATTAttributeType.characteristic,
                                            value: [characteristic.properties.rawValue] + RawATT.le(characteristic.valueHandle) + characteristic.uuid.attBytes))
                    attributes += entry.descriptors.map { .init(handle: $0.handle, type: $0.uuid, value: []) }
                }
            }
            return GATTDatabaseHash(attributes: attributes.sorted { $0.handle < $1.handle })
        }

        @Test("A reconnection to a trusted Bumble peer with an unchanged Database Hash sends no discovery PDU")
        func reconnectionSkipsDiscovery() async throws {
            try await withBumbleRig(arguments: Self.hostile) { rig in
                try await withHost(on: rig) { host in
                    let peer = try rig.peer
                    host.setDatabaseTrusted(true, for: peer)
                    let first = try await host.connect(to: peer)
                    guard case let .discovered(hash?) = try await host.prepareDatabase(of: first) else {
                        Issue.record("the first connection should discover, and Bumble has a Database Hash")
                        return
                    }
                    let database = try #require(first.gatt.knownDatabase)
                    #expect(Self.hash(of: database) == hash, "our hash of Bumble's database is the one Bumble computed")
                    try await first.disconnect()
                    try await rig.waitForEvent(named: "disconnected")

                    try await rig.record(cid: 4, events: false)
                    let second = try await host.connect(to: peer)
                    #expect(try await host.prepareDatabase(of: second) == .reused(hash: hash))
                    #expect(try await second.gatt.enableServiceChangedIndications())
                    let level = try await second.gatt.characteristic(BluetoothUUID(UInt16(0x2A19)), inService: BluetoothUUID(UInt16(0x180F)))
                    #expect(try await second.gatt.readValue(handle: level.valueHandle).count == 1)
                    let sent = try await rig.recorded(cid: 4)
                    #expect(second.gatt.discoveryRequestCount == 0)
                    #expect(sent.allSatisfy { !Self.discoveryOpcodes.contains($0.first ?? 0) }, "\(sent.map { Hex.encode($0) })")
                    #expect(Self.readByTypeTypes(sent).allSatisfy { $0 != 0x2803 && $0 != 0x2802 })
                    #expect(Self.readByTypeTypes(sent).contains(0x2B2A), "the hash was read")
                    #expect(sent.contains { $0.first == 0x12 && $0.count >= 3 }, "the CCCD of Service Changed and Client Supported Features were written")
                    try await second.disconnect()
                }
            }
        }

        @Test("After Bumble's database changed, the reconnection finds a new hash and discovers again")
        func changedDatabaseIsRediscovered() async throws {
            try await withBumbleRig(arguments: Self.hostile) { rig in
                try await withHost(on: rig) { host in
                    let peer = try rig.peer
                    host.setDatabaseTrusted(true, for: peer)
                    let first = try await host.connect(to: peer)
                    guard case let .discovered(hash?) = try await host.prepareDatabase(of: first) else {
                        Issue.record("the first connection should discover")
                        return
                    }
                    try await first.disconnect()
                    try await rig.waitForEvent(named: "disconnected")
                    _ = try await rig.request(.addService())

                    try await rig.record(cid: 4, events: false)
                    let second = try await host.connect(to: peer)
                    guard case let .discovered(changed?) = try await host.prepareDatabase(of: second) else {
                        Issue.record("the changed database should be discovered")
                        return
                    }
                    #expect(changed != hash)
                    #expect(second.gatt.discoveryRequestCount > 0)
                    #expect(try await rig.recorded(cid: 4).contains { $0.first == 0x10 }, "Read By Group Type went out")
                    let database = try #require(second.gatt.knownDatabase)
                    #expect(database.contains { $0.service.uuid == Self.added })
                    #expect(Self.hash(of: database) == changed)
                    #expect(await host.gattDatabaseCache.database(for: peer)?.hash == changed)
                    try await second.disconnect()
                }
            }
        }

        /// The cache files beside the bonds, by name.
        static func cacheFiles(_ bonds: String) throws -> [String: Data] {
            let directory = FileGATTDatabaseCache.defaultDirectory(bondDirectory: bonds)
            var files: [String: Data] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                files[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
            }
            return files
        }

        @Test("A spoofing Bumble peer (the bonded peer's address, no keys, its Device Information elsewhere, lying about its Database Hash) neither uses nor changes the cache; the real peer's reads then go to the right handles")
        func spoofedAddressLeavesTheCacheAlone() async throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-spoof-\(UUID().uuidString)").path
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let bonds = directory + "/bonds"
            var configuration = HostConfiguration()
            configuration.bondStore = FileBondStore(directory: bonds, logger: Logger(label: "test.bonds"))
            try await withBumbleRig(peripherals: 2, arguments: ["--plugin", "bluejay_pairing"] + Self.hostile) { rig in
                try await withHost(on: rig, configuration: configuration) { host in
                    let real = try rig.peripheralAddress(1)
                    // Bonded with the real peer, its database cached over the encrypted link.
                    let first = try await host.connect(to: real)
                    _ = try await host.pair(first)
                    guard case let .discovered(hash?) = try await host.prepareDatabase(of: first) else {
                        Issue.record("the bonded peer's database should be discovered and cached")
                        return
                    }
                    let serial = try await first.gatt.characteristic("180A", "2A25")
                    #expect(try await first.gatt.readValue(handle: serial.valueHandle) == Array("SN-0001".utf8))
                    try await first.disconnect()
                    try await rig.waitForEvent(named: "disconnected")
                    let cached = try Self.cacheFiles(bonds)
                    #expect(cached.count == 1)

                    // The real peer steps aside; the other device takes its address, with its
                    // Device Information service moved to other handles, and no keys.
                    _ = try await rig.hostile("address", ["peripheral": 1, "address": "F0:00:00:00:00:A1"])
                    _ = try await rig.hostile("move_service", ["peripheral": 2, "uuid": "180A"])
                    _ = try await rig.hostile("address", ["peripheral": 2, "address": real.address.description])
                    let spoofed = try await host.connect(to: real)
                    // It claims a Database Hash of its own, then the real peer's (anyone may read that).
                    for claimed in [[UInt8](repeating: 0xEE, count: 16), hash.bytes] {
                        _ = try await rig.hostile("answer", ["peripheral": 2, "opcode": 0x08, "times": 1,
                                                             "pdus": [Hex.encode([0x09, 18] + RawATT.le(0x0050) + claimed)]])
                        #expect(try await host.prepareDatabase(of: spoofed) == .unverified)
                        #expect(spoofed.gatt.knownDatabase == nil)
                    }
                    #expect(try Self.cacheFiles(bonds) == cached, "the cache file is as the real peer left it")
                    #expect(rig.receivedEvents.filter { $0.name == "hostile_answered" }.isEmpty, "the spoofer was never asked for its hash")
                    #expect(!spoofed.security.isEncrypted)
                    try await spoofed.disconnect()
                    try await rig.waitForEvent(named: "disconnected", matching: { $0.int("peripheral") == 2 })

                    // The real peer is back: its cached database, over a link encrypted with the bond.
                    _ = try await rig.hostile("address", ["peripheral": 2, "address": "F0:00:00:00:00:A2"])
                    _ = try await rig.hostile("address", ["peripheral": 1, "address": real.address.description])
                    let again = try await host.connect(to: real)
                    #expect(try await host.prepareDatabase(of: again) == .reused(hash: hash))
                    #expect(again.security.isEncrypted)
                    let found = try await again.gatt.characteristic("180A", "2A25")
                    #expect(found.valueHandle == serial.valueHandle)
                    #expect(try await again.gatt.readValue(handle: found.valueHandle) == Array("SN-0001".utf8))
                    #expect(again.gatt.discoveryRequestCount == 0)
                    try await again.disconnect()
                }
            }
        }

        @Test("A Bumble client reads our Database Hash, enables robust caching and is refused once after a change")
        func bumbleClientAgainstOurServer() async throws {
            try await using(try BumbleRig.start(script: .central)) { central in
                try await central.waitForReady()
                let manager = PeripheralManager(transport: try SystemTransports.open(central.transportSpecification))
                do {
                    try await manager.powerOn()
                    let server = manager.backend.server
                    let published = try await server.addService(GATTServiceDefinition(uuid: "FEE0", characteristics: [
                        GATTCharacteristicDefinition(uuid: "FEE1", properties: .read, value: [7]),
                    ]))
                    let value = try #require(published.characteristic("FEE1")).valueHandle
                    try await manager.startAdvertising(name: "Bluejay Cache")
                    _ = try await central.request("connect", ["address": central.hostPublicAddress, "address_type": "public"])
                    let read = try await central.request("read_by_uuid", ["uuid": "2B2A"])
                    let before = await server.databaseHash
                    #expect(read["values"]?.arrayValue?.compactMap { $0.stringValue } == [Hex.encode(before.bytes)])
                    let features = try await central.request("read_by_uuid", ["uuid": "2B29"])
                    #expect(features["values"]?.arrayValue?.compactMap { $0.stringValue } == ["00"])
                    _ = try await central.request("write", ["handle": 0x000B, "value": "01"])
                    let connection = try #require(await server.connectionHandles.first)
                    #expect(await server.clientSupportedFeatures(connectionHandle: connection) == 0x01)

                    _ = try await server.addService(GATTServiceDefinition(uuid: "FEF0", characteristics: [
                        GATTCharacteristicDefinition(uuid: "FEF1", properties: .read, value: [8]),
                    ]))
                    // Bumble did not subscribe to Service Changed: its next request is refused.
                    #expect(try await central.request("read", ["handle": Int(value)]).int("att_error") == 0x12)
                    #expect(try await central.request("read", ["handle": Int(value)]).bytes("value") == [7])
                    let after = try await central.request("read_by_uuid", ["uuid": "2B2A"])
                    #expect(after["values"]?.arrayValue?.compactMap { $0.stringValue } == [Hex.encode((await server.databaseHash).bytes)])
                    #expect(await server.databaseHash != before)
                    _ = try await central.request("disconnect")
                } catch {
                    await manager.powerOff()
                    Issue.record("\(error)\n\(central.diagnostics)")
                    return
                }
                await manager.powerOff()
            }
        }
    }
}
