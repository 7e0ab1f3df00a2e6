import Bluejay
import BluetoothCore
import BluetoothHCI
import BluetoothHost
import BluetoothTransport
import BluetoothVirtual
import Dispatch
import Foundation
import Synchronization

/// The whole receive path as an app runs it, with the radio taken out: a central (our host,
/// and Bluejay on it) connects to a peripheral over the in-process virtual link, subscribes,
/// and then the benchmark hands the central's transport ready-made H4 bytes (Handle Value
/// Notifications, advertising reports) exactly as a socket read would, in chunks. What is
/// measured is everything between those bytes and the app's callback: H4 framing, HCI, ACL,
/// L2CAP, ATT, GATT, Bluejay's listen and its hop to the callback queue.
public final class PipelineBench: Sendable {
    /// The central's transport: the virtual controller's, with an injection point beside it,
    /// and optionally a responder that answers some of the host's packets in the controller's
    /// place, from a thread of its own (as a socket's reader would deliver them).
    final class InjectingTransport: HCITransport {
        typealias Responder = @Sendable (H4Packet) -> [UInt8]?
        /// The closures sit in a struct: a `Mutex` whose value is itself a function type
        /// reabstracts it on every `withLock`, wrapping it in one more thunk each time.
        private struct Hooks {
            var receiver: (@Sendable (TransportEvent) -> Void)?
            var responder: Responder?
        }
        let inner: VirtualControllerTransport
        private let hooks = Mutex(Hooks())
        private let responderQueue = DispatchQueue(label: "bench.controller")
        var name: String { inner.name }

        init(_ inner: VirtualControllerTransport) {
            self.inner = inner
        }

        func start(receiver: @escaping @Sendable (TransportEvent) -> Void) {
            hooks.withLock { $0.receiver = receiver }
            inner.start(receiver: receiver)
        }

        func send(_ packet: H4Packet) throws(TransportError) {
            if let responder = hooks.withLock({ $0.responder }), let answer = responder(packet) {
                responderQueue.async { self.inject([answer]) }
                return
            }
            try inner.send(packet)
        }

        func close() { inner.close() }

        /// Answers the packets `responder` returns bytes for, instead of the controller.
        func respond(with responder: Responder?) {
            hooks.withLock { $0.responder = responder }
        }

        /// Delivers `chunks` as a stream transport would: each chunk is one read, deframed
        /// into one batch.
        func inject(_ chunks: [[UInt8]]) {
            guard let receiver = hooks.withLock({ $0.receiver }) else { return }
            var deframer = H4Deframer()
            for chunk in chunks {
                guard let packets = try? deframer.append(chunk[...]), !packets.isEmpty else { continue }
                receiver(.packets(packets))
            }
        }
    }

    public static let serviceUUID = BluetoothUUID(UInt16(0xFFF0))
    public static let readUUID = BluetoothUUID(UInt16(0xFFF1))
    public static let notifyUUID = BluetoothUUID(UInt16(0xFFF2))
    static let readValue = [UInt8](repeating: 0x5A, count: 20)

    let link: VirtualLink
    let peripheral: LEHost
    let transport: InjectingTransport
    public let bluejay: Bluejay
    public let connectionHandle: UInt16
    public let valueHandle: UInt16
    let counter = DeliveryCounter()

    private init(link: VirtualLink, peripheral: LEHost, transport: InjectingTransport, bluejay: Bluejay, connectionHandle: UInt16, valueHandle: UInt16) {
        self.link = link
        self.peripheral = peripheral
        self.transport = transport
        self.bluejay = bluejay
        self.connectionHandle = connectionHandle
        self.valueHandle = valueHandle
    }

    /// Connects, subscribes through Bluejay (a `listen` with `Data` values whose callback
    /// counts, or with `asyncListen` the `async` listen's stream, read by a task that counts),
    /// and returns once the subscription is on.
    public static func make(asyncListen: Bool = false) async throws -> PipelineBench {
        let link = VirtualLink(configuration: .init(timeScale: 1))
        let peripheralController = link.addController(name: "peripheral", address: BluetoothAddress("C0:00:00:00:00:02") ?? .zero)
        var configuration = HostConfiguration()
        configuration.deviceName = "Bench"
        let peripheral = LEHost(transport: peripheralController.makeTransport(), configuration: configuration, logger: quietLogger("bench.peripheral"))
        try await peripheral.powerOn()
        let published = try await peripheral.server.addService(GATTServiceDefinition(uuid: serviceUUID, characteristics: [
            GATTCharacteristicDefinition(uuid: readUUID, properties: [.read], value: readValue),
            GATTCharacteristicDefinition(uuid: notifyUUID, properties: [.notify], value: [0]),
        ]))
        guard let valueHandle = published.characteristics.last?.valueHandle else { throw BenchmarkSetupError("no value handle") }
        try await peripheral.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported])]),
                                              parameters: AdvertisingParameters(intervalRange: 0x0020...0x0020))

        let centralController = link.addController(name: "central", address: BluetoothAddress("C0:00:00:00:00:01") ?? .zero)
        let transport = InjectingTransport(centralController.makeTransport())
        let bluejay = Bluejay(logger: quietLogger("bench.bluejay"))
        // No receive coalescing: here the thread that injects the bytes is the reader, so a
        // pause would hold the injector back instead of letting more data gather in a socket.
        // What is measured is the processing of each batch; the rig benchmark shows coalescing.
        var host = HostConfiguration()
        host.receiveCoalescingWindow = .zero
        bluejay.start(mode: .new(StartOptions(transport: .transport(transport), hostConfiguration: host)))
        try await bluejay.waitUntilReady()
        let peer = PeripheralIdentifier(address: DeviceAddress(peripheralController.address, type: .public))
        try await bluejay.connect(peer, timeout: .seconds(10))
        guard let handle = await bluejay.host?.connections.first?.handle else { throw BenchmarkSetupError("no connection") }
        let bench = PipelineBench(link: link, peripheral: peripheral, transport: transport, bluejay: bluejay, connectionHandle: handle,
                                  valueHandle: valueHandle)
        let counter = bench.counter
        let characteristic = CharacteristicIdentifier(uuid: notifyUUID.description, service: ServiceIdentifier(uuid: serviceUUID.description))
        if asyncListen {
            let values: ValueStream<Data> = try await bluejay.listen(to: characteristic)
            Task {
                for try await value in values { counter.add(value.count) }
            }
        } else {
            bluejay.listen(to: characteristic) { (result: ReadResult<Data>) in
                if case let .success(value) = result { counter.add(value.count) }
            }
        }
        while await peripheral.server.subscriptions(forHandle: valueHandle).isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        return bench
    }

    /// The H4 bytes of one ATT PDU on this connection, in one ACL packet.
    func h4(_ pdu: ATTPDU) -> [UInt8] {
        let frame = L2CAPBasicFrame.encode(channelID: .att, payload: pdu.encode())
        return H4Packet(.acl, ACLDataPacket(connectionHandle: connectionHandle, packetBoundary: .firstFlushable, data: frame).encode()).framed
    }

    /// The H4 bytes of `count` Handle Value Notifications of `size` value bytes, cut into
    /// reads of `perRead` packets (as a socket read returns what has arrived).
    public func notificationChunks(count: Int, size: Int, perRead: Int) -> [[UInt8]] {
        let value = (0..<size).map { UInt8(truncatingIfNeeded: $0) }
        let packet = h4(.handleValueNotification(ATTHandleValueNotification(handle: valueHandle, value: value)))
        var chunks: [[UInt8]] = []
        var remaining = count
        while remaining > 0 {
            let n = min(perRead, remaining)
            var chunk: [UInt8] = []
            chunk.reserveCapacity(n * packet.count)
            for _ in 0..<n { chunk += packet }
            chunks.append(chunk)
            remaining -= n
        }
        return chunks
    }

    /// `count` sequential reads of the 20-byte characteristic through Bluejay's `async` read,
    /// each started when the previous one returned. The first ones go through the virtual
    /// controller (they discover the characteristic); then the controller's part is played by
    /// a responder that answers each Read Request with a Read Response and a Number Of
    /// Completed Packets, from a thread of its own, so that what is measured is our host and
    /// Bluejay, not the radio.
    ///
    /// `throughHost` reads with the host's `GATTClient` directly instead (no Bluejay queue), to
    /// tell the host's share from Bluejay's.
    public func sequentialReads(_ count: Int, throughHost: Bool = false) async throws {
        let characteristic = CharacteristicIdentifier(uuid: Self.readUUID.description, service: ServiceIdentifier(uuid: Self.serviceUUID.description))
        let _: Data = try await bluejay.read(from: characteristic)
        guard let gatt = await bluejay.host?.connections.first?.gatt else { throw BenchmarkSetupError("no connection") }
        let target = try await gatt.characteristic(Self.readUUID, inService: Self.serviceUUID)
        let answer = h4(.readResponse(ATTReadResponse(value: Self.readValue)))
            + H4Packet(.event, HCIEvent.numberOfCompletedPackets(NumberOfCompletedPacketsEvent(entries: [
                .init(connectionHandle: connectionHandle, completedPackets: 1),
            ])).encode()).framed
        let handle = connectionHandle
        transport.respond { packet in
            // An ACL packet of this connection carrying an ATT Read Request (opcode 0x0A).
            guard packet.indicator == .acl, let acl = try? ACLDataPacket.decode(packet.bytes), acl.connectionHandle == handle,
                  let frame = try? L2CAPBasicFrame.parse(acl.data[...]), frame.channelID == .att,
                  frame.payload.first == ATTOpcode.readRequest.rawValue else { return nil }
            return answer
        }
        defer { transport.respond(with: nil) }
        for _ in 0..<count {
            let length = throughHost ? try await gatt.readValue(handle: target.valueHandle).count
                : (try await bluejay.read(from: characteristic) as Data).count
            guard length == Self.readValue.count else { throw BenchmarkSetupError("read \(length) bytes") }
        }
    }

    /// Injects the chunks and returns once the app's callback has seen every notification
    /// they carry; returns how many.
    public func deliver(_ chunks: [[UInt8]], count: Int) async -> Int {
        let target = counter.count + count
        transport.inject(chunks)
        await counter.wait(until: target)
        return count
    }

    /// The H4 bytes of `count` LE Advertising Report events (one ADV_NONCONN_IND report each,
    /// 31 bytes of data, from `advertisers` advertisers in turn: 50 fixed addresses, or that
    /// many random static addresses from a fixed seed), cut into reads of `perRead` events.
    public static func advertisingReportChunks(count: Int, perRead: Int, advertisers: Int = 50) throws -> [[UInt8]] {
        let data = try AdvertisingData([
            .flags([.leGeneralDiscoverableMode, .brEdrNotSupported]),
            .completeLocalName("Adv-00"),
            .manufacturerSpecificData(companyID: 0xFFFF, data: Array(repeating: 0xAB, count: 16)),
        ]).encoded()
        var seed: UInt64 = 10
        let events = (0..<advertisers).map { index in
            var address = BluetoothAddress(bytes: [0xC0, 0xAD, 0x00, 0x00, 0x00, UInt8(truncatingIfNeeded: index)]) ?? .zero
            if advertisers > 50 {
                // SplitMix64: distinct random static addresses (the two top bits set).
                seed &+= 0x9E37_79B9_7F4A_7C15
                var z = (seed ^ (seed >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                let bytes = (0..<6).map { UInt8(truncatingIfNeeded: z >> (8 * $0)) }
                address = BluetoothAddress(bytes: [bytes[0] | 0xC0] + bytes[1...]) ?? .zero
            }
            let report = LEAdvertisingReportEvent.Report(eventType: .advNonconnInd, addressType: .random, address: address, data: data,
                                                         rssi: -50)
            return H4Packet(.event, HCIEvent.le(.advertisingReport(LEAdvertisingReportEvent(reports: [report]))).encode()).framed
        }
        var chunks: [[UInt8]] = []
        var index = 0
        while index < count {
            let n = min(perRead, count - index)
            chunks.append((index..<index + n).flatMap { events[$0 % events.count] })
            index += n
        }
        return chunks
    }

    /// Runs a scan with duplicates through Bluejay's `async` API, injects the chunks (the
    /// controller is told to scan, but its own reports are few next to these), and returns once
    /// the app has seen `count` discoveries.
    public func scan(_ chunks: [[UInt8]], count: Int) async throws {
        let scanning = Task {
            var received = 0
            for try await event in bluejay.scan(allowDuplicates: true, throttleRSSIDelta: 0) {
                guard case .discovered = event else { continue }
                received += 1
                if received == count { break }
            }
            return received
        }
        while await bluejay.host?.isScanning != true { try await Task.sleep(for: .milliseconds(1)) }
        transport.inject(chunks)
        let received = try await scanning.value
        guard received == count else { throw BenchmarkSetupError("the scan ended after \(received) reports") }
        // The stream's end stops the scan a moment later: return once it has, so that the next
        // call finds no scan of this one still on (its reports would go there).
        while bluejay.isScanning { try await Task.sleep(for: .milliseconds(1)) }
    }

    /// Shuts everything down.
    public func shutdown() async {
        await bluejay.stop()
        await peripheral.shutdown()
        link.shutdown()
    }
}

/// Counts what the app's callback received and lets the benchmark wait for a total.
final class DeliveryCounter: Sendable {
    private struct State {
        var count = 0
        var bytes = 0
        var target = Int.max
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    var count: Int { state.withLock { $0.count } }

    func add(_ bytes: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count += 1
            state.bytes += bytes
            guard state.count >= state.target, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    func wait(until target: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state -> Bool in
                if state.count >= target { return true }
                state.target = target
                state.waiter = continuation
                return false
            }
            if done { continuation.resume() }
        }
    }
}

/// CPU time of this process (user + system, every thread) and its context switches, from getrusage.
public enum ProcessCPU {
    public static func now() -> Double { usage().cpu }

    public static func usage() -> (cpu: Double, contextSwitches: Int) {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
            + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
        return (cpu, usage.ru_nvcsw + usage.ru_nivcsw)
    }
}
