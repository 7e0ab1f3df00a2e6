import ArgumentParser
import BluetoothCore
import BluetoothHost
import Foundation
import Synchronization

/// `bluejay l2cap`: a byte pipe over an LE credit-based channel. As a central it connects and
/// opens the channel; with `--listen` it advertises and serves one channel as a peripheral.
/// Either way stdin goes out as SDUs and every SDU received is written to stdout.
struct L2CAPCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "l2cap",
        abstract: "Pipe stdin and stdout through an L2CAP credit-based channel.",
        discussion: """
        As a central (--address), connects, opens a channel to --psm, sends stdin as SDUs of at \
        most --sdu bytes (default: the peer's MTU) and writes each SDU received to stdout as it \
        arrives. After the end of stdin it waits until --idle seconds pass with nothing received, \
        closes the channel and exits 0. With --listen it advertises as a peripheral and serves \
        one channel on --psm the same way. Exit codes: 69 when the peer has no server on the \
        PSM, 75 when it does not answer, 1 for other channel failures.
        """
    )

    @OptionGroup var common: CommonOptions

    @Option(name: .long, help: "The peripheral's address, e.g. C0:FF:EE:00:11:22 (central role).")
    var address: String?

    @Flag(name: .long, help: "The address is a random one.")
    var random = false

    @Option(name: .long, help: "Seconds to wait for the peripheral to accept the connection (0 to 86400).")
    var connectTimeout = Seconds(whole: 10)

    @Flag(name: .long, help: "Advertise and serve one channel on --psm as a peripheral.")
    var listen = false

    @Option(name: .long, help: "The SPSM (0x01…0xFF; decimal or 0x hex). Dynamic ones are 0x80…0xFF.")
    var psm: String

    @Option(name: .long, help: "The largest SDU to send (default: the peer's MTU).")
    var sdu: Int?

    @Option(name: .long, help: "Our MTU: the largest SDU we receive (23…65535).")
    var mtu: UInt16 = 2048

    @Option(name: .long, help: "Seconds with nothing received, after stdin ends, before closing.")
    var idle = Seconds(whole: 1)

    @Option(name: .long, help: "The advertised name with --listen.")
    var name = "Bluejay L2CAP"

    mutating func run() async throws {
        let options = self
        try await runReportingBluejayErrors {
            guard let psm = Self.parsePSM(options.psm) else { throw CLIError.usage("--psm must be 0x01…0xFF, got \(options.psm)") }
            if let sdu = options.sdu, sdu < 1 { throw CLIError.usage("--sdu must be at least 1") }
            guard options.mtu >= 23 else { throw CLIError.usage("--mtu must be at least 23") }
            if options.listen == (options.address != nil) { throw CLIError.usage("give either --address (central) or --listen (peripheral)") }
            let parameters = L2CAPChannelParameters(mtu: options.mtu, mps: options.mtu, initialCredits: 32)
            let output = Output(json: options.common.json)
            try await HostSession.run(options.common) { host in
                do {
                    let channel: L2CAPChannel
                    if options.listen {
                        channel = try await Self.serve(psm: psm, parameters: parameters, name: options.name, host: host, output: output)
                    } else {
                        guard let bytes = BluetoothAddress(options.address ?? "") else {
                            throw CLIError.usage("\"\(options.address ?? "")\" is not a Bluetooth address")
                        }
                        let peer = DeviceAddress(bytes, type: options.random ? .random : .public)
                        let connection: Connection
                        do {
                            connection = try await host.connect(to: peer, timeout: options.connectTimeout.duration)
                        } catch HostError.connectionTimeout {
                            throw CLIError.deviceNotFound("\(peer) did not accept a connection within \(options.connectTimeout) s")
                        }
                        channel = try await connection.openChannel(psm: psm, parameters: parameters)
                    }
                    Output.error("channel open: PSM \(Hex.format(psm)), our MTU \(channel.mtu), peer MTU \(channel.peerMTU)")
                    try await Self.pipe(channel, sduLimit: min(options.sdu ?? channel.peerMTU, channel.peerMTU), idle: options.idle.duration)
                } catch let error as L2CAPChannelError {
                    switch error {
                    case let .host(hostError): throw hostError
                    case .refused(.spsmNotSupported): throw BluejayFailure("L2CAP: \(error)", exitCode: 69)
                    case .timeout: throw BluejayFailure("L2CAP: \(error)", exitCode: 75)
                    default: throw BluejayFailure("L2CAP: \(error)", exitCode: 1)
                    }
                }
            }
        }
    }

    static func parsePSM(_ text: String) -> UInt16? {
        let value = text.lowercased().hasPrefix("0x") ? UInt16(text.dropFirst(2), radix: 16) : UInt16(text)
        guard let value, (0x01...0xFF).contains(value) else { return nil }
        return value
    }

    /// Advertises, accepts the first channel on `psm`, and stops advertising.
    private static func serve(psm: UInt16, parameters: L2CAPChannelParameters, name: String, host: LEHost, output: Output)
        async throws -> L2CAPChannel {
        let (accepted, continuation) = AsyncStream.makeStream(of: L2CAPChannel.self, bufferingPolicy: .bufferingNewest(1))
        let server = try await host.listen(psm: psm, parameters: parameters) { continuation.yield($0) }
        try await host.startAdvertising(AdvertisingData([.flags([.leGeneralDiscoverableMode, .brEdrNotSupported]), .completeLocalName(name)]))
        let address = try await host.powerOn().address
        Output.error("advertising \"\(name)\" as \(address), listening on PSM \(Hex.format(server.psm))")
        Console.flush()
        var channel: L2CAPChannel?
        for await next in accepted {
            channel = next
            break
        }
        await host.stopListening(psm: server.psm)
        try? await host.stopAdvertising()
        guard let channel else { throw CancellationError() }
        return channel
    }

    /// Sends stdin, prints what arrives, and closes after stdin's end and `idle` of quiet.
    private static func pipe(_ channel: L2CAPChannel, sduLimit: Int, idle: Duration) async throws {
        let clock = ContinuousClock()
        let lastReceived = Mutex(clock.now)
        let receiver = Task {
            let stdout = FileHandle.standardOutput
            for try await sdu in channel.sdus {
                lastReceived.withLock { $0 = clock.now }
                stdout.write(Data(sdu))
            }
        }
        while let chunk = await StandardInput.read(upTo: sduLimit) {
            try await channel.write(chunk)
        }
        lastReceived.withLock { $0 = max($0, clock.now) }
        // Quiet for `idle` after stdin's end, or the peer closed the channel.
        while channel.isOpen {
            let deadline = lastReceived.withLock { $0 } + idle
            if clock.now >= deadline { break }
            try await clock.sleep(until: deadline)
        }
        channel.close()
        receiver.cancel()
        _ = await receiver.result
    }
}

/// Reads stdin on a dispatch queue of its own (a blocking read must not hold one of the
/// tasks' threads), one chunk per call, so a slow channel slows the reading.
enum StandardInput {
    private static let queue = DispatchQueue(label: "bluejay.stdin")

    /// The next bytes of stdin, at most `size`; `nil` at its end.
    static func read(upTo size: Int) async -> [UInt8]? {
        await withCheckedContinuation { continuation in
            queue.async {
                var buffer = [UInt8](repeating: 0, count: size)
                let count = buffer.withUnsafeMutableBytes { Foundation.read(STDIN_FILENO, $0.baseAddress, size) }
                continuation.resume(returning: count > 0 ? Array(buffer[0..<count]) : nil)
            }
        }
    }
}
