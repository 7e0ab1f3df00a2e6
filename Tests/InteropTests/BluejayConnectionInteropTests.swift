import Bluejay
import BluetoothHCI
import Foundation
import Synchronization
import Testing

extension InteropSuites.BluejayInteropTests {
    @Suite("Connecting and disconnecting (README: Connecting, Timeouts, Disconnect, Cancel Everything, Auto Reconnect)")
    struct Connecting {
        @Test("connect with a timeout to an absent device fails with connectionTimedOut after the timeout")
        func timeoutToAbsentDevice() async throws {
            let clock = ManualClock()
            try await withBluejay(clock: .manual(clock)) { _, bluejay in
                let absent = PeripheralIdentifier(address: DeviceAddress(try #require(BluetoothAddress("F0:00:00:00:00:63")), type: .random))
                let second = Mutex<ConnectionResult?>(nil)
                let first = Mutex<ConnectionResult?>(nil)
                bluejay.connect(absent, timeout: .seconds(2)) { result in first.withLock { $0 = result } }
                // Fails at once: a connection is being made.
                bluejay.connect(absent, timeout: .seconds(2)) { result in second.withLock { $0 = result } }
                // The controller took the attempt, whose deadline is set: move time to it.
                try await waitUntil("the controller trying") { await bluejay.host?.isConnecting == true }
                // The refusal reaches its callback through the callback queue: wait for it (a
                // loaded run read it before it came).
                try await waitUntil("the second attempt's refusal") { second.withLock { $0 } != nil }
                #expect(second.withLock { $0 } == .failure(.alreadyConnecting(absent)))
                clock.advance(by: .milliseconds(1999))
                #expect(first.withLock { $0 } == nil && bluejay.isConnecting, "still trying at 1.999 s")
                clock.advance(by: .milliseconds(1))
                try await waitUntil("the timeout") { first.withLock { $0 } != nil }
                #expect(first.withLock { $0 } == .failure(.connectionTimedOut(absent)))
                try await waitUntil("Bluejay settles") { !bluejay.isConnecting }
                #expect(!bluejay.isConnecting && !bluejay.isConnected)
            }
        }

        @Test("Queued disconnect: waits for the requests before it; an expected disconnection turns auto-reconnect off")
        func queuedDisconnect() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                let recorder = Recorder()
                bluejay.register(connectionObserver: recorder)
                bluejay.registerDisconnectHandler(handler: recorder)
                bluejay.register(logObserver: recorder)
                try await connect(bluejay, to: peer, rig: rig)
                let order = Collected<String>()
                let result: DisconnectionResult = try await callback { done in
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in order.append("read \(result)") }
                    bluejay.disconnect { result in
                        order.append("disconnect")
                        done(result)
                    }
                }
                #expect(result == .disconnected(peer))
                #expect(order.all == ["read success(1)", "disconnect"])
                #expect(!bluejay.shouldAutoReconnect)
                try await rig.waitForEvent(named: "disconnected")
                try await waitUntil("the handler") { recorder.count("handler") == 1 }
                #expect(recorder.events.all.contains("handler expected willReconnect=false"))
                #expect(recorder.logLines.all.contains { $0.contains("expected disconnection") && !$0.contains("unexpected") })
                try await Task.sleep(for: .seconds(1))
                #expect(!bluejay.isConnected && !bluejay.isConnecting, "no reconnection after an expected disconnection")
                let notConnected: DisconnectionResult = try await callback { done in bluejay.disconnect { done($0) } }
                #expect(notConnected == .failure(.notConnected))
            }
        }

        @Test("Immediate disconnect: every queued and running request fails with cancelled, then the link goes down")
        func immediateDisconnect() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                try await connect(bluejay, to: peer, rig: rig)
                let reads = Collected<ReadResult<UInt8>>()
                for _ in 0..<6 {
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in reads.append(result) }
                }
                let result: DisconnectionResult = try await callback { done in bluejay.disconnect(immediate: true) { done($0) } }
                #expect(result == .disconnected(peer))
                try await waitUntil("every read reported") { reads.count == 6 }
                let cancelled = reads.all.filter { $0 == .failure(.cancelled) }.count
                #expect(cancelled >= 5, "\(reads.all)")
                try await rig.waitForEvent(named: "disconnected")
                #expect(!bluejay.shouldAutoReconnect)
            }
        }

        @Test("cancelEverything(shouldDisconnect: false) empties the queue and stays connected")
        func cancelEverythingStayingConnected() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                try await connect(bluejay, to: peer, rig: rig)
                let outcomes = Collected<String>()
                for _ in 0..<5 {
                    bluejay.read(from: Peer.bodySensorLocation) { (result: ReadResult<UInt8>) in outcomes.append("\(result)") }
                }
                bluejay.write(to: Peer.bodySensorLocation, value: UInt8(3)) { result in outcomes.append("write \(result)") }
                bluejay.cancelEverything(shouldDisconnect: false)
                try await waitUntil("six outcomes") { outcomes.count == 6 }
                #expect(outcomes.all.filter { $0.contains("cancelled") }.count >= 5, "\(outcomes.all)")
                #expect(bluejay.isConnected)
                #expect(bluejay.shouldAutoReconnect)
                let after: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } }
                #expect((try? after.get()) != nil, "the queue works again: \(after)")
                #expect(!rig.receivedEvents.contains { $0.name == "disconnected" })
            }
        }

        @Test("Auto-reconnect after the peripheral drops the link; the disconnect handler turns it off")
        func autoReconnect() async throws {
            try await withBluejay { rig, bluejay in
                let peer = try rig.peripheral().identifier()
                let recorder = Recorder()
                bluejay.register(connectionObserver: recorder)
                bluejay.registerDisconnectHandler(handler: recorder)
                bluejay.register(logObserver: recorder)
                try await connect(bluejay, to: peer, rig: rig)
                #expect(bluejay.shouldAutoReconnect, "on by default")
                try await rig.waitForEvent(named: "connected")

                try await rig.request(.disconnect())
                try await rig.waitForEvent(named: "connected", timeout: .seconds(15))
                try await waitUntil("reconnected") { bluejay.isConnected && recorder.count("connected") == 2 }
                #expect(recorder.events.all.contains("handler unexpected willReconnect=true"))
                #expect(recorder.logLines.all.contains { $0.contains("unexpected disconnection") })
                #expect(recorder.logLines.all.contains { $0.contains("auto-reconnecting") })
                let location: ReadResult<UInt8> = try await callback { done in bluejay.read(from: Peer.bodySensorLocation) { done($0) } }
                #expect(location == .success(1))

                recorder.reconnectAnswer.withLock { $0 = .change(shouldAutoReconnect: false) }
                try await rig.request(.disconnect())
                try await waitUntil("the handler, twice") { recorder.count("handler") == 2 }
                try await Task.sleep(for: .seconds(2))
                #expect(!bluejay.isConnected && !bluejay.isConnecting)
                #expect(!bluejay.shouldAutoReconnect)
                #expect(rig.receivedEvents.filter { $0.name == "connected" }.count == 2, "no third connection")
                #expect(recorder.logLines.all.contains { $0.contains("the disconnect handler set auto-reconnect off") })
            }
        }
    }
}
