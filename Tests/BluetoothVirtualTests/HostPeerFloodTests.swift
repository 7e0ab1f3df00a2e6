import BluetoothCore
import BluetoothHCI
@testable import BluetoothHost
import BluetoothTransport
@testable import BluetoothVirtual
import Synchronization
import Testing

/// The host's queue of peers' signalling and SMP PDUs is bounded per link: a peer flooding
/// signalling fills only its own share, while another link opens a credit-based channel and
/// pairs as if nothing happened.
@Suite("Host: a flooding peer cannot starve another link", .timeLimit(.minutes(1)))
struct HostPeerFloodTests {
    static func handle(of packet: H4Packet) -> UInt16 {
        UInt16(packet.bytes[packet.bytes.startIndex]) | UInt16(packet.bytes[packet.bytes.startIndex + 1] & 0x0F) << 8
    }

    @Test func aSignallingFloodOnOneLinkLeavesAnotherLinksChannelAndPairingAlone() async throws {
        // Not a TwoDevices: three devices (a raw HCI flooder besides our two hosts), the central behind a HoldingTransport.
        let link = VirtualLink()
        let centralController = link.addController(name: "central", address: TestAddresses.central)
        let peripheralController = link.addController(name: "peripheral", address: TestAddresses.peripheral, position: .init(x: 2, y: 0))
        // A flooder whose controller takes the whole flood at once and sends it fast.
        let flooderController = link.addController(name: "flooder", address: TestAddresses.third,
                                                   configuration: .init(aclBufferCount: 255, packetsPerConnectionEvent: 64),
                                                   position: .init(x: 0, y: 2))
        var configuration = HostConfiguration()
        // The raw flooder never answers ATT.
        configuration.exchangesMTUOnConnect = false
        // A small bound, so that a short flood passes it.
        configuration.limits.queuedPeerPDUs = 8
        let holding = HoldingTransport(centralController.makeTransport())
        let central = LEHost(transport: holding, configuration: configuration)
        let peripheral = LEHost(transport: peripheralController.makeTransport())
        let flooder = HCITestHost(flooderController)
        try await central.powerOn()
        try await peripheral.powerOn()
        try await flooder.initialize()
        try await flooder.advertise()
        let flooded = try await central.connect(to: DeviceAddress(TestAddresses.third, type: .public), timeout: .seconds(5))
        let handle = try await flooder.connectionComplete().0.connectionHandle

        let (accepted, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self)
        _ = try await peripheral.listen(psm: 0x0080) { continuation.yield($0) }
        try await peripheral.startAdvertising(AdvertisingData())
        let second = try await central.connect(to: DeviceAddress(TestAddresses.peripheral, type: .public), timeout: .seconds(5))

        // Credits for a channel that does not exist: each is work for the host, none is answered.
        let credit = L2CAPBasicFrame.encode(channelID: .leSignaling, payload: LESignalingPacket(
            identifier: 1, command: .flowControlCreditIndication(.init(cid: L2CAPChannelID(rawValue: 0x0077), credits: 1))).encode())
        // The host falls behind: what arrives is held, and handed over at once, the flood first,
        // once the other link's answer is there too (the flooder's packets go in first).
        let floodHandle = flooded.handle
        let secondHandle = second.handle
        func floodAndHold() throws {
            holding.hold { held in
                held.filter { Self.handle(of: $0) == floodHandle }.count >= 40 && held.contains { Self.handle(of: $0) == secondHandle }
            }
            for _ in 0..<40 { try flooder.sendACL(handle: handle, credit) }
        }
        try floodAndHold()
        let channel = try await central.openChannel(psm: 0x0080, on: second)
        let dropped = central.dropCounts.droppedHostItems
        #expect(dropped >= 40 - 8, "the flood passed its link's bound")
        try floodAndHold()
        let security = try await central.pair(second)
        #expect(central.dropCounts.droppedHostItems >= dropped + 40 - 8)
        #expect(security.isEncrypted)
        try await channel.write([1, 2, 3])
        let served = try await withTimeout("the accepted channel") {
            for await channel in accepted { return channel }
            throw TestTimeout(description: "no channel")
        }
        #expect(try await served.read() == [1, 2, 3])
        channel.close()
        try await second.disconnect()
        #expect(flooded.isConnected, "the flooder's link stays: dropping its PDUs is enough")
        await central.shutdown()
        await peripheral.shutdown()
    }
}

/// Between a host and its transport: while told to, holds the ACL data the controller sends
/// the host and hands it over as one batch once `release` says so, as a host that fell behind
/// gets what piled up. Events pass at once.
final class HoldingTransport: HCITransport {
    private struct State {
        var held: [H4Packet] = []
        var release: (@Sendable ([H4Packet]) -> Bool)?
    }

    private let inner: any HCITransport
    private let state = Mutex(State())

    init(_ inner: any HCITransport) { self.inner = inner }

    var name: String { inner.name }

    /// Holds ACL data from now on, until `release` is true of what is held.
    func hold(until release: @escaping @Sendable ([H4Packet]) -> Bool) {
        state.withLock { $0.release = release }
    }

    func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
        inner.start { [self] event in
            guard case let .packets(packets) = event else { return receiver(event) }
            let (passed, released) = state.withLock { state -> ([H4Packet], [H4Packet]) in
                guard let release = state.release else { return (packets, []) }
                var passed: [H4Packet] = []
                for packet in packets {
                    if packet.indicator == .acl { state.held.append(packet) } else { passed.append(packet) }
                }
                guard release(state.held) else { return (passed, []) }
                defer {
                    state.held = []
                    state.release = nil
                }
                return (passed, state.held)
            }
            if !passed.isEmpty { receiver(.packets(passed)) }
            if !released.isEmpty { receiver(.packets(released)) }
        }
    }

    func send(_ packet: H4Packet) throws(TransportError) {
        try inner.send(packet)
    }

    func close() {
        inner.close()
    }
}
