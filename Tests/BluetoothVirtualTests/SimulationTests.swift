import BluetoothCore
import BluetoothHCI
import BluetoothTransport
@testable import BluetoothVirtual
import Logging
import Testing

/// The simulation as a plain value, stepped by hand through simulated time: no clock, no
/// threads, exact times.
@Suite("Link simulation, stepped by hand", .timeLimit(.minutes(1)))
struct SimulationTests {
    struct Output {
        var time: Duration
        var controller: ControllerID
        var event: HCIEvent?
        var acl: ACLDataPacket?
    }

    struct Bench {
        var simulation = LinkSimulation(radio: RadioModel(), random: SeededRandomNumberGenerator(seed: 42), logger: Logger(label: "test"))
        var outputs: [Output] = []

        mutating func send(_ command: some HCICommand, from id: ControllerID) {
            simulation.receive(H4Packet(.command, command.encode()), from: id)
            collect()
        }

        mutating func sendACL(_ data: [UInt8], handle: UInt16, from id: ControllerID) {
            simulation.receive(H4Packet(.acl, ACLDataPacket(connectionHandle: handle, packetBoundary: .firstNonFlushable, data: data).encode()), from: id)
            collect()
        }

        /// Advances in 100 µs steps until `until` holds or `limit` passes.
        mutating func run(for limit: Duration, until done: (([Output]) -> Bool)? = nil) {
            let end = simulation.now + limit
            while simulation.now < end {
                simulation.advance(to: simulation.now + .microseconds(100))
                collect()
                if let done, done(outputs) { return }
            }
        }

        mutating func collect() {
            for delivery in simulation.takeOutbox() {
                switch delivery.packet.indicator {
                case .event: outputs.append(Output(time: simulation.now, controller: delivery.controller, event: try? HCIEvent.decode(delivery.packet.bytes)))
                case .acl: outputs.append(Output(time: simulation.now, controller: delivery.controller, acl: try? ACLDataPacket.decode(delivery.packet.bytes)))
                default: break
                }
            }
        }

        func connectionComplete(on id: ControllerID) -> (LEEnhancedConnectionCompleteEvent, Duration)? {
            Self.connectionComplete(on: id, in: outputs)
        }

        static func connectionComplete(on id: ControllerID, in outputs: [Output]) -> (LEEnhancedConnectionCompleteEvent, Duration)? {
            for output in outputs where output.controller == id {
                if case let .le(.enhancedConnectionComplete(complete))? = output.event { return (complete, output.time) }
            }
            return nil
        }
    }

    @Test func creditsReturnInTheConnectionEventThatCarriedTheLastFragment() throws {
        var bench = Bench()
        let central = bench.simulation.addController(name: "a", address: TestAddresses.central, configuration: .init(), position: .origin)
        let peripheral = bench.simulation.addController(name: "b", address: TestAddresses.peripheral, configuration: .init(), position: .init(x: 1, y: 0))
        for id in [central, peripheral] {
            bench.send(SetEventMaskCommand(mask: .leHost), from: id)
            bench.send(LESetEventMaskCommand(mask: HCITestHost.allLEEvents), from: id)
        }
        bench.send(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20), from: peripheral)
        bench.send(LESetAdvertisingEnableCommand(enable: true), from: peripheral)
        // 20 ms connection interval.
        bench.send(LECreateConnectionCommand(scanInterval: 0x20, scanWindow: 0x20, peerAddressType: .public, peerAddress: TestAddresses.peripheral,
                                             connectionIntervalMin: 16, connectionIntervalMax: 16, maxLatency: 0, supervisionTimeout: 100), from: central)
        bench.run(for: .milliseconds(100)) { Bench.connectionComplete(on: central, in: $0) != nil }
        let (centralComplete, connectedAt) = try #require(bench.connectionComplete(on: central))
        let (peripheralComplete, peripheralAt) = try #require(bench.connectionComplete(on: peripheral))
        #expect(connectedAt == peripheralAt)
        // The first advertising event comes after advDelay only (0-10 ms).
        #expect(connectedAt <= .milliseconds(11))

        // 100 octets on a 27-octet data length: 4 LL PDUs, one event.
        bench.run(for: .milliseconds(3))
        let sentAt = bench.simulation.now
        bench.outputs.removeAll()
        let data = [UInt8(96), 0, 4, 0] + [UInt8](repeating: 0xAB, count: 96)
        bench.sendACL(data, handle: centralComplete.connectionHandle, from: central)
        bench.run(for: .milliseconds(50)) { outputs in
            outputs.contains { if case .numberOfCompletedPackets? = $0.event { return true }; return false }
        }
        let fragments = bench.outputs.filter { $0.controller == peripheral && $0.acl != nil }
        let credit = try #require(bench.outputs.first { if case .numberOfCompletedPackets? = $0.event { return true }; return false })
        #expect(fragments.map { $0.acl?.data.count } == [27, 27, 27, 19])
        #expect(fragments.allSatisfy { $0.acl?.connectionHandle == peripheralComplete.connectionHandle })
        #expect(Set(fragments.map(\.time)).count == 1, "one connection event carried them all")
        #expect(credit.controller == central)
        #expect(credit.time == fragments.last?.time)
        #expect(credit.time > sentAt)
        // Connection events are on a 20 ms grid from the first anchor, 2.5 ms after connecting.
        let offset = (credit.time - connectedAt - .microseconds(2500)).milliseconds
        #expect(offset.truncatingRemainder(dividingBy: 20) < 0.2, "event at \(offset) ms after the first anchor")
        if case let .numberOfCompletedPackets(event)? = credit.event {
            #expect(event.entries == [.init(connectionHandle: centralComplete.connectionHandle, completedPackets: 1)])
        }
    }

    @Test func sameSeedSameAdvertisingTimes() {
        func reportTimes(seed: UInt64) -> [Duration] {
            var bench = Bench(simulation: LinkSimulation(radio: RadioModel(), random: SeededRandomNumberGenerator(seed: seed), logger: Logger(label: "test")))
            let scanner = bench.simulation.addController(name: "s", address: TestAddresses.central, configuration: .init(), position: .origin)
            let advertiser = bench.simulation.addController(name: "a", address: TestAddresses.peripheral, configuration: .init(), position: .origin)
            bench.send(SetEventMaskCommand(mask: .leHost), from: scanner)
            bench.send(LESetEventMaskCommand(mask: [.advertisingReport]), from: scanner)
            bench.send(LESetScanEnableCommand(enable: true, filterDuplicates: false), from: scanner)
            bench.send(LESetAdvertisingParametersCommand(intervalMin: 0x20, intervalMax: 0x20, advertisingType: .advNonconnInd), from: advertiser)
            bench.send(LESetAdvertisingEnableCommand(enable: true), from: advertiser)
            bench.run(for: .milliseconds(200))
            return bench.outputs.filter { if case .le(.advertisingReport)? = $0.event { return true }; return false }.map(\.time)
        }
        let first = reportTimes(seed: 7)
        #expect(first.count >= 6)
        #expect(first == reportTimes(seed: 7))
        #expect(first != reportTimes(seed: 8))
        // Gaps between 20 and 30 ms: advInterval plus advDelay.
        for (later, earlier) in zip(first.dropFirst(), first) {
            #expect(later - earlier >= .milliseconds(20) && later - earlier <= .microseconds(30_100))
        }
    }
}
