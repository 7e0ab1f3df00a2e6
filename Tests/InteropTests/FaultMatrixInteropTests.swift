import Bluejay
import BluetoothCore
import BluetoothHCI
import Foundation
import Testing

extension InteropSuites {
    /// The Bumble part of issue 10's fault matrix: the peripheral drops the link while each GATT
    /// procedure is in flight (`bluejay_hostile.py` holds back the procedure's PDU and
    /// disconnects). Bluejay's timers run on a manual clock nobody moves: the typed error
    /// comes with no time passing. The queue moves on, auto-reconnect restores the listen,
    /// and numbered notifications sent after it arrive once each, in order. The other faults
    /// (controller reset, broken transport, lost and late packets, a silent controller) run on
    /// the virtual controller (`BluetoothSimulatorTests/FaultMatrixTests`).
    @Suite("Fault matrix on Bumble: link drops during each GATT procedure")
    struct FaultMatrixInteropTests {
        static let longValue = CharacteristicIdentifier(uuid: "6E400004-B5A3-F393-E0A9-E50E24DCCA9E", service: Peer.custom)
        static let indicating = CharacteristicIdentifier(uuid: "6E400005-B5A3-F393-E0A9-E50E24DCCA9E", service: Peer.custom)

        enum Procedure: String, CaseIterable, Sendable, CustomTestStringConvertible {
            case discovery, read, longRead, longWrite, cccdWrite, indication
            var testDescription: String { rawValue }
        }

        @Test("The peripheral drops the link during a GATT procedure: a typed error at once, the queue moves on, the listen comes back",
              arguments: Procedure.allCases)
        func linkDrop(during procedure: Procedure) async throws {
            let clock = ManualClock()
            let start = clock.now
            // An ATT MTU of 23, so that 300 octets make a long write and 600 a long read.
            try await withBluejay(arguments: ["--plugin", "bluejay_hostile"], clock: .manual(clock),
                                  options: { $0.hostConfiguration.preferredATTMTU = 23 }) { rig, bluejay in
                let peripheral = try rig.peripheral().identifier()
                let recorder = Recorder()
                bluejay.register(connectionObserver: recorder)
                bluejay.registerDisconnectHandler(handler: recorder)
                try await connect(bluejay, to: peripheral, rig: rig)
                let rates = AwaitableLog<Int>()
                bluejay.listen(to: Peer.heartRate) { (result: ReadResult<Data>) in
                    if case let .success(data) = result, data.count == 3 { rates.append(Int(data[1]) | Int(data[2]) << 8) }
                }
                _ = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }

                let outcome = AwaitableLog<BluejayError?>()
                switch procedure {
                case .discovery:
                    // Device Information is not discovered yet: Find By Type Value or Read By Type first.
                    try await rig.dropLink(on: [0x06, 0x08])
                    bluejay.read(from: Peer.serialNumber) { (result: ReadResult<Data>) in outcome.append(result.error) }
                case .read:
                    let location: UInt8 = try await bluejay.read(from: Peer.bodySensorLocation)
                    #expect(location == 1)
                    try await rig.dropLink(on: [0x0A])
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<Data>) in outcome.append(result.error) }
                case .longRead:
                    // 600 octets: a Read, then Read Blobs.
                    try await rig.dropLink(on: [0x0C])
                    bluejay.read(from: Self.longValue) { (result: ReadResult<Data>) in outcome.append(result.error) }
                case .longWrite:
                    // 300 octets: Prepare Write Requests of 18, then Execute Write.
                    try await rig.dropLink(on: [0x16], occurrence: 2)
                    bluejay.write(to: Self.longValue, value: Data(repeating: 0x5A, count: 300)) { (result: WriteResult) in
                        if case let .failure(error) = result { outcome.append(error) } else { outcome.append(nil) }
                    }
                case .cccdWrite:
                    try await rig.dropLink(on: [0x12])
                    let reported = Collected<Bool>()
                    bluejay.listen(to: Self.indicating) { (result: ReadResult<Data>) in
                        guard reported.count == 0 else { return }
                        reported.append(true)
                        outcome.append(result.error)
                    }
                case .indication:
                    bluejay.listen(to: Self.indicating) { (result: ReadResult<Data>) in
                        if outcome.count == 0 { outcome.append(result.error) }
                    }
                    _ = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == Self.indicating.uuidString && $0.bool("indicate") == true }
                    // The confirmation never reaches the peripheral: it drops the link instead.
                    try await rig.dropLink(on: [0x1E])
                    // Raw: the rig's `indicate` command would wait 30 s for the confirmation.
                    try await rig.hostile("push", ["uuid": Self.indicating.uuidString, "value": [UInt8(1), 0, 0, 0], "indicate": true])
                }
                // An operation queued behind the procedure. On a loaded machine the link may be
                // gone, and its loss handled, before it is queued (a stress run): then it waits
                // behind the auto-reconnection and runs on the new link. Asked after queueing:
                // `isConnected` turns false when the host reports the loss, before Bluejay handles
                // it, so still connected then means queued before the handling.
                let next = AwaitableLog<ReadResult<Data>>()
                bluejay.read(from: Peer.batteryLevel) { next.append($0) }
                let queuedWhileConnected = bluejay.isConnected
                _ = try await rig.waitForEvent(named: "hostile_answered")

                let dropped = BluejayError.disconnected(peripheral, reason: .remoteUserTerminatedConnection)
                let error = try #require(await outcome.wait(forCount: 1, timeout: .seconds(10))?.first, "the procedure ended")
                if procedure == .indication {
                    // The value arrived; the app hears of the loss through its disconnect handler.
                    #expect(error == nil, "\(String(describing: error))")
                    try await waitUntil("the disconnect handler") { recorder.count("handler unexpected") == 1 }
                } else {
                    #expect(error == dropped, "\(String(describing: error))")
                }
                #expect(clock.now == start, "no time passed on Bluejay's clock")
                let behind = try #require(await next.wait(forCount: 1, timeout: .seconds(10))?.first)
                if procedure != .indication {
                    // It fails with the link, or, when it starts after Bluejay handled the
                    // disconnection, as not connected: a typed error either way.
                    let typedError = behind == .failure(dropped) || behind == .failure(.notConnected)
                    #expect(typedError || (!queuedWhileConnected && (try? behind.get()) != nil),
                            "the read queued behind the procedure (queued while connected: \(queuedWhileConnected)): \(behind)")
                }

                // Auto-reconnect, the listen restored, and every notification after it, once, in order.
                try await waitUntil("the reconnection") { recorder.count("connected") == 2 && bluejay.isConnected }
                _ = try await rig.waitForEvent(named: "subscribed") { $0.string("uuid") == "2A37" && $0.bool("notify") == true }
                let before = rates.count
                try await rig.request(.notify(uuid: "2A37", count: 20, start: 1000))
                let values = await rates.wait(forCount: before + 20) ?? rates.items
                #expect(Array(values.dropFirst(before)) == Array(1000..<1020), "none lost, none repeated, in order")
                let location: UInt8 = try await bluejay.read(from: Peer.bodySensorLocation)
                #expect(location == 1)
            }
        }
    }
}

extension Result where Failure == BluejayError {
    /// The error, `nil` on success.
    var error: BluejayError? {
        if case let .failure(error) = self { return error }
        return nil
    }
}
