@testable import Bluejay
import BluetoothCore
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import Foundation
import Testing

/// `StartOptions.capture`: Bluejay records its host's HCI traffic in a btsnoop file, from the
/// API or from `$BLUEJAY_CAPTURE`.
@Suite("Bluejay HCI capture", .timeLimit(.minutes(1)))
struct CaptureSettingTests {
    private func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-capture-\(UUID().uuidString.prefix(8)).btsnoop").path
    }

    @Test("A session's packets, both ways, are in the file once Bluejay stops")
    func sessionIsCaptured() async throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let link = VirtualLink()
        let peripheral = try await VirtualPeripheral.start(on: link, name: "Sensor", address: "D1:00:00:00:00:0C")
        let bluejay = try await startBluejay(on: link) { $0.capture = .file(path) }
        try await bluejay.connect(peripheral.identifier, timeout: .seconds(10))
        let location: UInt8 = try await bluejay.read(from: HeartRate.bodySensorLocation)
        #expect(location == 1)
        await bluejay.stop()
        await peripheral.shutdown()

        let file = try BTSnoop.decodeFile(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        let packets = try file.records.map { ($0.flags, try $0.packet()) }
        #expect(packets.first?.1 == H4Packet(.command, [0x03, 0x0C, 0x00]), "HCI_Reset comes first")
        // ATT over ACL (L2CAP channel 4): the Read Request sent, its Read Response received.
        let sentATT = packets.filter { $0.0 == [] && $0.1.indicator == .acl }.map { Array($0.1.bytes.dropFirst(8)) }
        let receivedATT = packets.filter { $0.0 == .received && $0.1.indicator == .acl }.map { Array($0.1.bytes.dropFirst(8)) }
        #expect(sentATT.contains { $0.first == 0x0A }, "a Read Request")
        #expect(receivedATT.contains { $0 == [0x0B, 0x01] }, "the Read Response with the location")
        #expect(packets.last?.1.indicator == .event, "the disconnection's events end it")
    }

    @Test("$BLUEJAY_CAPTURE names the file; an existing one needs $BLUEJAY_CAPTURE_MODE")
    func environment() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(try CaptureSetting.environment.open(environment: [:]) == nil)
        #expect(try CaptureSetting.off.open(environment: ["BLUEJAY_CAPTURE": path]) == nil)
        let capture = try #require(try CaptureSetting.environment.open(environment: ["BLUEJAY_CAPTURE": path]))
        #expect(capture.path == path)
        capture.close()
        #expect(throws: BluejayError.self) { _ = try CaptureSetting.environment.open(environment: ["BLUEJAY_CAPTURE": path]) }
        #expect(throws: BluejayError.self) {
            _ = try CaptureSetting.environment.open(environment: ["BLUEJAY_CAPTURE": path, "BLUEJAY_CAPTURE_MODE": "sometimes"])
        }
        let appended = try #require(try CaptureSetting.environment.open(environment: ["BLUEJAY_CAPTURE": path, "BLUEJAY_CAPTURE_MODE": "append"]))
        appended.close()
    }

    @Test("Keys are blanked unless the setting or $BLUEJAY_CAPTURE_KEYS=keep keeps them")
    func keys() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let blanked = try #require(try CaptureSetting.file(path).open(environment: [:]))
        #expect(blanked.keys == .blanked)
        blanked.close()
        let kept = try #require(try CaptureSetting.file(path, mode: .replace, keys: .kept).open(environment: [:]))
        #expect(kept.keys == .kept)
        kept.close()
        let environment = ["BLUEJAY_CAPTURE": path, "BLUEJAY_CAPTURE_MODE": "replace"]
        #expect(try #require(try CaptureSetting.environment.open(environment: environment)).keys == .blanked)
        let fromEnvironment = try #require(try CaptureSetting.environment.open(environment: environment.merging(["BLUEJAY_CAPTURE_KEYS": "keep"]) { $1 }))
        #expect(fromEnvironment.keys == .kept)
        fromEnvironment.close()
        #expect(throws: BluejayError.self) {
            _ = try CaptureSetting.environment.open(environment: environment.merging(["BLUEJAY_CAPTURE_KEYS": "yes"]) { $1 })
        }
    }
}
