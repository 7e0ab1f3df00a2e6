@testable import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import Foundation
import Testing

@Suite("Identifiers, timeouts, errors and options", .timeLimit(.minutes(1)))
struct ValueTypeTests {
    @Test("Identifiers compare by UUID, whatever its spelling")
    func identifiers() {
        let service = ServiceIdentifier(uuid: "180d")
        #expect(service == ServiceIdentifier(uuid: "0x180D"))
        #expect(service == ServiceIdentifier(uuid: BluetoothUUID(UInt16(0x180D))))
        #expect(service.description == "180D")
        let characteristic = CharacteristicIdentifier(uuid: "2A37", service: service)
        #expect(characteristic != CharacteristicIdentifier(uuid: "2A37", service: ServiceIdentifier(uuid: "180F")))
        #expect(Set([characteristic, CharacteristicIdentifier(uuid: "2a37", service: service)]).count == 1)
    }

    @Test("A string that is not a UUID does not trap; using it is a typed error")
    func invalidUUID() {
        let bad = ServiceIdentifier(uuid: "heart rate")
        #expect(bad.uuid == nil)
        #expect(throws: BluejayError.invalidUUID("heart rate")) { try bad.requireUUID() }
    }

    @Test("Identifiers survive JSON, as restoration stores them")
    func codable() throws {
        let characteristic = CharacteristicIdentifier(uuid: "6E400003-B5A3-F393-E0A9-E50E24DCCA9E", service: ServiceIdentifier(uuid: "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"))
        let decoded = try JSONDecoder().decode(CharacteristicIdentifier.self, from: JSONEncoder().encode(characteristic))
        #expect(decoded == characteristic)
    }

    @Test("Timeouts")
    func timeouts() {
        #expect(Timeout.none.duration == nil)
        #expect(Timeout.seconds(1.5).duration == .milliseconds(1500))
        #expect(Timeout.seconds(-1).duration == .zero)
        #expect(Timeout.seconds(.nan).duration == .zero)
        // Once a trap converting to milliseconds.
        #expect(Timeout.seconds(1e300).duration == .seconds(1_000_000_000))
        #expect(Timeout.seconds(.infinity).duration == .seconds(1_000_000_000))
        #expect(Timeout.seconds(-.infinity).duration == .zero)
    }

    @Test("Host errors map to the case that says what happened")
    func errorMapping() {
        let peer = PeripheralIdentifier(address: DeviceAddress(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6]) ?? .zero, type: .random))
        let att = HostError.att(ATTError(requestOpcode: .readRequest, handle: 0x12, code: .readNotPermitted))
        #expect(BluejayError(att, peripheral: peer, operation: "reading X") == .attError(code: .readNotPermitted, operation: "reading X", handle: 0x12))
        #expect(BluejayError(HostError.disconnected(reason: .connectionTimeout), peripheral: peer) == .disconnected(peer, reason: .connectionTimeout))
        #expect(BluejayError(HostError.connectionTimeout(peer.address), peripheral: peer) == .connectionTimedOut(peer))
        #expect(BluejayError(HostError.cancelled) == .cancelled)
        #expect(BluejayError(CancellationError()) == .cancelled)
        #expect(BluejayError(HostError.attTransactionTimeout) == .peripheralNotResponding)
        #expect(BluejayError(HostError.scanInProgress) == .multipleScanNotSupported)
    }

    @Test("Every error reads as a sentence")
    func descriptions() {
        let peer = PeripheralIdentifier(address: DeviceAddress(BluetoothAddress(bytes: [1, 2, 3, 4, 5, 6]) ?? .zero, type: .random))
        #expect(BluejayError.attError(code: .writeNotPermitted, operation: "writing 2A38", handle: 0x2A).description
            .contains("writing 2A38 failed"))
        #expect(BluejayError.deserializationFailed(type: "UInt16", data: Data([0xAB]), reason: "short").description
            == "cannot make UInt16 from 1 byte [ab]: short")
        #expect(BluejayError.disconnected(peer, reason: nil).localizedDescription.contains("transport closed"))
        #expect(BluejayError.timedOut(operation: "read X", after: .milliseconds(1500)).description == "read X timed out after 1.5 s")
    }

    @Test("The default transport comes from BLUEJAY_HCI; a bad one is a typed error")
    func transportFromEnvironment() {
        #expect(throws: BluejayError.self) {
            _ = try TransportProvider.environment.open(environment: ["BLUEJAY_HCI": "bogus"])
        }
        var virtualName: String?? = .none
        _ = try? TransportProvider.environment.open(environment: [:], virtualController: { name throws(BluejayError) in
            virtualName = .some(name)
            throw .notStarted
        })
        #expect(virtualName == .some(nil), "no variable: the in-process virtual controller")
        _ = try? TransportProvider.specification("virtual:left").open(virtualController: { name throws(BluejayError) in
            virtualName = .some(name)
            throw .notStarted
        })
        #expect(virtualName == .some("left"))
    }

    @Test("Restoration state goes to a file named for the restore identifier")
    func restorationStore() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-store-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = RestorationStore(directory: directory, restoreIdentifier: "com.example/../app")
        #expect(store.fileURL.deletingLastPathComponent().path == directory.path)
        #expect(store.fileURL.lastPathComponent == "com.example_.._app.json")
        #expect(store.load() == .nothing)
        let service = ServiceIdentifier(uuid: "180D")
        let record = RestorationRecord(peripheral: "F0:00:00:00:00:01/random", listens: [CharacteristicIdentifier(uuid: "2A37", service: service)])
        try store.save(record)
        #expect(store.load() == .record(record))
        guard case let .record(loaded) = store.load() else {
            Issue.record("the record was not loaded")
            return
        }
        #expect(loaded.peripheralIdentifier?.address.type == .random)
        try store.save(RestorationRecord())
        #expect(!FileManager.default.fileExists(atPath: store.fileURL.path), "an empty record removes the file")
    }

    @Test("The state directory follows BLUEJAY_STATE_DIR, then XDG_STATE_HOME, then HOME")
    func stateDirectory() {
        #expect(BackgroundRestoreConfig.defaultDirectory(environment: ["BLUEJAY_STATE_DIR": "/tmp/a"]).path == "/tmp/a")
        #expect(BackgroundRestoreConfig.defaultDirectory(environment: ["XDG_STATE_HOME": "/tmp/s"]).path == "/tmp/s/bluejay")
        #expect(BackgroundRestoreConfig.defaultDirectory(environment: ["HOME": "/home/u"]).path == "/home/u/.local/state/bluejay")
    }
}
