import Bluejay
import BluetoothSimulator
import BluetoothTransport
import BluetoothVirtual
import Dispatch
import Foundation
import Synchronization
import Testing

/// The code samples of the DocC articles (Sources/Bluejay/Bluejay.docc), as printed there,
/// run against simulated peripherals. ``samplesAreTheseTests()`` checks that every sample of
/// every article appears in this file line for line, so an article cannot drift from code
/// that compiles and runs.
@Suite("DocC articles: the code samples", .timeLimit(.minutes(1)))
struct DocCArticleExamplesTests {
    let heartRateService = ServiceIdentifier(uuid: "180D")
    var bodySensorLocation: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A38", service: heartRateService) }
    var heartRate: CharacteristicIdentifier { CharacteristicIdentifier(uuid: "2A37", service: heartRateService) }

    @Test("Getting started: start on a transport string, scan for one sensor, connect, read, write, listen")
    func gettingStarted() async throws {
        let simulator = Simulator(link: InProcessRadio.link)
        _ = try await simulator.addHeartRateSensor(.init(name: "My Sensor", serialNumber: "SN-DOCC", measurementInterval: .milliseconds(50)))
        let print = Printed()
        try await gettingStartedSample(print)
        #expect(print.lines.count == 1)
        #expect(print.lines.first?.hasPrefix("heart rate measurement [") == true, "\(print.lines)")
        #expect(print.lines.first?.hasSuffix("sensor at 1") == true, "\(print.lines)")
        await simulator.shutdown()

        // The capture settings of the same article.
        var options = StartOptions(transport: .specification("hci0"))
        options.capture = .file("session.btsnoop", mode: .replace)
        #expect(options.capture == .file("session.btsnoop", mode: .replace))
    }

    private func gettingStartedSample(_ print: Printed) async throws {
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .specification("virtual:getting-started"))))
        try await bluejay.waitUntilReady()

        let heartRateService = ServiceIdentifier(uuid: "180D")
        let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
        let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)

        var found: PeripheralIdentifier?
        for try await event in bluejay.scan(serviceIdentifiers: [heartRateService]) {
            if case .discovered(let discovery) = event, discovery.localName == "My Sensor" {
                found = discovery.peripheralIdentifier
                break
            }
        }
        guard let sensor = found else { return }
        try await bluejay.connect(sensor, timeout: .seconds(15))

        let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
        try await bluejay.write(to: bodySensorLocation, value: UInt8(2))
        for try await value in try await bluejay.listen(to: heartRate) as ValueStream<Data> {
            print("heart rate measurement \(Array(value)), sensor at \(location)")
            break
        }
        try await bluejay.disconnect()
        await bluejay.stop()
    }

    @Test("Porting a Bluejay app: a callback queue of one's own, the callbacks of iOS")
    func portingCallbacks() async throws {
        let simulator = Simulator(link: InProcessRadio.link)
        let sensor = try await simulator.addHeartRateSensor(.init(name: "Porting HRM", serialNumber: "SN-PORT"))
        let print = Printed()

        let bluejay = Bluejay()
        let callbacks = DispatchQueue(label: "app.bluetooth")
        bluejay.start(mode: .new(StartOptions(transport: .specification("virtual:porting"), callbackQueue: callbacks)))

        try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(10))
        bluejay.read(from: bodySensorLocation) { (result: ReadResult<UInt8>) in
            switch result {
            case .success(let location): print("sensor location \(location)")
            case .failure(let error): print("read failed: \(error)")
            }
        }
        bluejay.write(to: bodySensorLocation, value: UInt8(2)) { result in print("write: \(result)") }

        let lines = await print.log.wait(forCount: 2)
        #expect(lines?.first == "sensor location 1", "\(print.lines)")
        #expect(lines?.last?.hasPrefix("write: ") == true && lines?.last?.contains("failure") == false, "\(print.lines)")
        #expect(await sensor.location == .wrist)
        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("Porting from LittleBluetooth: BluejayCentral, scan, connect, read, listen, disconnect")
    func portingFromLittleBluetooth() async throws {
        let simulator = Simulator()
        _ = try await simulator.addHeartRateSensor(.init(measurementInterval: .milliseconds(50)))
        let host = LEHost(transport: simulator.centralTransport())
        try await host.powerOn()
        let print = Printed()

        let central = BluejayCentral(host: host)
        var found: PeripheralIdentifier?
        for try await event in central.scan(serviceIdentifiers: [heartRateService]) {
            found = event.discovery.peripheralIdentifier
            break
        }
        guard let identifier = found else { return }
        let sensor = try await central.connect(identifier, timeout: .seconds(15))
        let location: UInt8 = try await sensor.read(from: bodySensorLocation)
        for try await measurement in try await sensor.listen(to: heartRate) as ValueStream<Data> {
            print("\(Array(measurement)) from a sensor at \(location)")
            break
        }
        try await sensor.disconnect()

        #expect(print.lines.count == 1 && print.lines.first?.hasSuffix("from a sensor at 1") == true, "\(print.lines)")
        await host.shutdown()
        await simulator.shutdown()
    }

    @Test("Choosing a transport: a transport string opened by SystemTransports, with an HCI capture")
    func transportWithCapture() async throws {
        let simulator = Simulator()
        let server = VirtualControllerServer(controller: simulator.centralController(named: "served"))
        try server.start()
        defer { server.stop() }
        let specification = try #require(server.transportSpecification)
        let capturePath = FileManager.default.temporaryDirectory.appendingPathComponent("docc-\(UUID().uuidString.prefix(8)).btsnoop").path
        defer { try? FileManager.default.removeItem(atPath: capturePath) }

        let transport = try SystemTransports.open(specification)
        var configuration = HostConfiguration()
        configuration.capture = try HCICapture(path: capturePath, mode: .replace)
        let host = LEHost(transport: transport, configuration: configuration)
        try await host.powerOn()

        await host.shutdown()
        let file = try BTSnoop.decodeFile(Array(try Data(contentsOf: URL(fileURLWithPath: capturePath))))
        #expect(try file.records.first?.packet() == H4Packet(.command, [0x03, 0x0C, 0x00]), "HCI_Reset, sent first")
        #expect(file.records.contains { $0.flags.contains(.received) }, "the controller's answers")
        await simulator.shutdown()
    }

    @Test("Testing with the simulator: a sensor, a declared peripheral and its failure, simulated time")
    func simulator() async throws {
        let simulator = Simulator()
        let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .sequence([72, 75]), measurementInterval: .milliseconds(50)))
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .transport(simulator.centralTransport()))))
        try await bluejay.waitUntilReady()
        try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))
        let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
        #expect(location == 1)

        let thermometer = SimulatedPeripheral(name: "Thermo", services: [
            SimulatedService(uuid: "1809", characteristics: [
                SimulatedCharacteristic(uuid: "2A6E", properties: [.read], value: [0x2C, 0x09]),
            ]),
        ])
        let device = try await simulator.add(thermometer)
        device.failNextRequests(.attError(.readNotPermitted), on: "2A6E")

        try await bluejay.disconnect()
        try await bluejay.connect(device.peripheralIdentifier, timeout: .seconds(5))
        let temperature = CharacteristicIdentifier(uuid: "2A6E", service: ServiceIdentifier(uuid: "1809"))
        do {
            let value: Int16 = try await bluejay.read(from: temperature)
            Issue.record("the injected failure did not come: read \(value)")
        } catch let BluejayError.attError(code, _, _) {
            #expect(code == .readNotPermitted)
        }
        let value: Int16 = try await bluejay.read(from: temperature)
        #expect(value == 0x092C, "only the next request fails")
        await bluejay.stop()

        let appTime = ManualClock()
        var options = StartOptions(transport: .transport(simulator.centralTransport(named: "timed")), operationTimeout: .seconds(2))
        options.hostConfiguration.clock = .manual(appTime)
        #expect(options.operationTimeout == .seconds(2))
        await simulator.shutdown()
    }

    @Test("Pairing and bonding: a locked sensor pairs on the first read; the delegate types a passkey")
    func pairingAndBonding() async throws {
        let print = Printed()
        let simulator = Simulator()
        var locked = HeartRateSensor.Configuration()
        locked.locationSecurity = .encryption
        let sensor = try await simulator.addHeartRateSensor(locked)

        var options = StartOptions(transport: .transport(simulator.centralTransport()))
        options.hostConfiguration.security = SecurityManagerSettings(ioCapability: .noInputNoOutput)
        options.hostConfiguration.bondStore = InMemoryBondStore()
        let bluejay = Bluejay()
        bluejay.start(mode: .new(options))
        try await bluejay.waitUntilReady()
        try await bluejay.connect(sensor.device.peripheralIdentifier, timeout: .seconds(5))

        let location: UInt8 = try await bluejay.read(from: bodySensorLocation)   // pairs, then reads
        print("sensor at \(location), link \(bluejay.linkSecurity ?? .unencrypted)")
        let bonds = try await bluejay.bonds()
        print("\(bonds.count) bond")
        try await bluejay.removeBond(sensor.device.peripheralIdentifier)

        #expect(print.lines.first?.contains("encrypted") == true, "\(print.lines)")
        #expect(print.lines.last == "1 bond")
        #expect(try await bluejay.bonds().isEmpty)
        let delegate = PasskeyPrompt()
        bluejay.register(pairingDelegate: delegate)
        await bluejay.stop()
        await simulator.shutdown()
    }

    @Test("Pairing and bonding: the pair-again delegate refuses a weaker key over a passkey bond")
    func pairAgainDelegate() async throws {
        let passkey = KeyStrength(isAuthenticated: true, isSecureConnections: true, keySize: 16)
        let justWorks = KeyStrength(isAuthenticated: false, isSecureConnections: true, keySize: 16)
        let identity = DeviceAddress(try #require(BluetoothAddress("C0:00:00:00:00:0A")), type: .random)
        let replacement = BondReplacement(identity: identity, bonded: passkey, proposed: justWorks, isClaimedIdentity: true)
        #expect(replacement.isWeaker)
        let answer = AwaitableLog<Bool>()
        PairAgain().shouldReplaceBond(replacement, for: PeripheralIdentifier(address: identity), reply: { answer.append($0) })
        #expect(answer.items == [false])
    }

    @Test("Performance and limits: the host's bounds and receive coalescing from StartOptions")
    func limits() {
        var configuration = HostConfiguration()
        configuration.limits.hci.aclQueuedBytesPerConnection = 256 * 1024
        configuration.receiveCoalescingWindow = .zero
        let options = StartOptions(transport: .specification("virtual:limits"), hostConfiguration: configuration)
        #expect(options.hostConfiguration.limits.hci.aclQueuedBytesPerConnection == 262_144)
        #expect(options.hostConfiguration.receiveCoalescingWindow == .zero)
    }

    /// Every ```swift block of every article is in this file, line for line (indentation and
    /// `import` lines aside).
    @Test func samplesAreTheseTests() throws {
        let here = URL(fileURLWithPath: #filePath)
        let catalog = here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/Bluejay/Bluejay.docc")
        let source = try String(contentsOf: here, encoding: .utf8).split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let articles = try FileManager.default.contentsOfDirectory(atPath: catalog.path).filter { $0.hasSuffix(".md") }
        var samples = 0
        for article in articles {
            let text = try String(contentsOf: catalog.appendingPathComponent(article), encoding: .utf8)
            for block in Self.swiftBlocks(text) {
                samples += 1
                let lines = block.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("import ") }
                let found = source.indices.contains { start in
                    start + lines.count <= source.count && Array(source[start..<(start + lines.count)]) == lines
                }
                #expect(found, "a sample of \(article) is not in DocCArticleExamplesTests.swift as printed:\n\(block.joined(separator: "\n"))")
            }
        }
        #expect(samples >= 8, "the articles' samples were found (\(samples))")
    }

    /// The lines of each ```swift block, in order.
    static func swiftBlocks(_ markdown: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current ?? [])
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }
}

/// The article's delegate, as printed there.
final class PasskeyPrompt: PairingDelegate {
    func passkeyRequested(for peripheral: PeripheralIdentifier, reply: @escaping @Sendable (UInt32?) -> Void) {
        reply(123_456)   // what the user typed
    }

    func pairingFinished(with peripheral: PeripheralIdentifier, result: Result<LinkSecurity, BluejayError>) {
        print("paired with \(peripheral): \(result)")
    }
}

/// The article's "pair again?" delegate, as printed there.
final class PairAgain: PairingDelegate {
    func shouldReplaceBond(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier,
                           reply: @escaping @Sendable (Bool) -> Void) {
        reply(false)   // or ask the user
    }

    func bondReplaced(_ replacement: BondReplacement, for peripheral: PeripheralIdentifier) {
        print("the bond with \(replacement.identity) was replaced")
    }
}

/// Stands in for `print` in the samples and keeps the lines.
private final class Printed: Sendable {
    let log = AwaitableLog<String>()
    var lines: [String] { log.items }
    func callAsFunction(_ items: Any...) {
        log.append(items.map { "\($0)" }.joined(separator: " "))
    }
}
