import BluetoothCore
import BluetoothHost
import BluetoothTransport
import Foundation
import Glibc
import Testing

extension InteropSuites {
    /// The UART transport (`serial:DEVICE@BAUD`) against a Bumble controller on a pseudo-terminal,
    /// as a UART controller (Zephyr's hci_uart) is on /dev/ttyACM0: the rig (`--uart-pty`)
    /// serves controller A on the pty's master and writes what it sends in chunks of 1 to 16
    /// octets with pauses between them, so our reads end in the middle of packets.
    @Suite("UART transport against a Bumble controller on a pseudo-terminal")
    struct SerialInteropTests {
        static let custom = "6E400001-B5A3-F393-E0A9-E50E24DCCA9E"
        static let longValue = "6E400004-B5A3-F393-E0A9-E50E24DCCA9E"

        /// Our host on the rig's pty at `baudRate`.
        static func withSerialHost<T>(on rig: BumbleRig, baudRate: Int = 1_000_000, _ body: (LEHost) async throws -> T) async throws -> T {
            let path = try #require(rig.uartPath, "the rig serves no pty: \(rig.diagnostics)")
            let host = LEHost(transport: try SystemTransports.open("serial:\(path)@\(baudRate)"))
            do {
                try await host.powerOn()
                let result = try await body(host)
                await host.shutdown()
                return result
            } catch {
                await host.shutdown()
                throw error
            }
        }

        @Test("A whole session over the pty: scan, connect, a 600-octet read, 20 notifications; packets cut anywhere")
        func sessionAcrossPartialReads() async throws {
            try await withBumbleRig(arguments: ["--uart-pty", "--seed", "7"]) { rig in
                try await Self.withSerialHost(on: rig) { host in
                    let peer = try rig.peer
                    let scan = try await host.scan(ScanOptions(active: true))
                    var found: Advertisement?
                    for try await advertisement in scan where advertisement.peer == peer && advertisement.scanResponse != nil {
                        found = advertisement
                        break
                    }
                    await host.stopScanning()
                    #expect(found?.localName == "Bluejay Peer")

                    let connection = try await host.connect(to: peer)
                    let gatt = connection.gatt
                    #expect(try await gatt.read(try await gatt.characteristic("180A", "2A25")) == Array("SN-0001".utf8))
                    #expect(try await gatt.read(try await gatt.characteristic(Self.custom, Self.longValue)) == (0..<600).map { UInt8($0 % 256) })

                    let values = try await gatt.subscribe(to: try await gatt.characteristic("180D", "2A37"))
                    _ = try await rig.waitForEvent(named: "subscribed") { $0.bool("notify") == true }
                    try await rig.request(.notify(uuid: "2A37", count: 20, start: 1))
                    let received = try await collect(20, from: values, timeout: .seconds(20))
                    #expect(received == (1...20).map { [0x01, UInt8($0), 0x00] })
                    try await connection.disconnect()
                }
                // The controller's side: most packets went out in several pieces.
                let stats = try await rig.request("uart_stats")
                let packets = try #require(stats.int("packets"))
                let split = try #require(stats.int("split_packets"))
                #expect(packets >= 40 && split * 2 > packets, "\(stats)")
            }
        }

        @Test("The baud rate and RTS/CTS reach the tty: 8N1 raw, as the test and the controller's side read them")
        func settingsReachTheTTY() async throws {
            try await withBumbleRig(arguments: ["--uart-pty"]) { rig in
                let path = try #require(rig.uartPath)
                for (rate, constant) in [(115_200, B115200), (1_000_000, B1000000), (3_000_000, B3000000)] {
                    let transport = try SystemTransports.open("serial:\(path)@\(rate)")
                    // The test's own view: termios of the port, through a descriptor of its own.
                    let descriptor = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK)
                    try #require(descriptor >= 0)
                    var options = termios()
                    #expect(tcgetattr(descriptor, &options) == 0)
                    close(descriptor)
                    #expect(cfgetospeed(&options) == speed_t(constant) && cfgetispeed(&options) == speed_t(constant))
                    #expect(options.c_cflag & tcflag_t(CRTSCTS) != 0)
                    // The controller's view: the master reads the same settings.
                    let seen = try await rig.request("uart_termios")
                    #expect(seen.int("ospeed") == rate && seen.int("ispeed") == rate, "\(seen)")
                    #expect(seen.bool("crtscts") == true && seen.bool("clocal") == true && seen.bool("cread") == true, "\(seen)")
                    #expect(seen.bool("cs8") == true && seen.bool("parenb") == false && seen.bool("cstopb") == false, "\(seen)")
                    #expect(seen.bool("icanon") == false && seen.bool("echo") == false && seen.bool("isig") == false, "\(seen)")
                    #expect(seen.bool("opost") == false && seen.bool("icrnl") == false && seen.bool("ixon") == false, "\(seen)")
                    transport.close()
                }
            }
        }

        @Test("A device that vanishes mid-session ends it with a typed error at once, without a hang")
        func vanishingDevice() async throws {
            try await withBumbleRig(arguments: ["--uart-pty"]) { rig in
                let path = try #require(rig.uartPath)
                let host = LEHost(transport: try SystemTransports.open("serial:\(path)@1000000"))
                try await host.powerOn()
                let events = await host.events()
                let connection = try await host.connect(to: try rig.peer)
                let serial = try await connection.gatt.characteristic("180A", "2A25")
                // The peripheral leaves the read unanswered: it is in flight when the device goes.
                _ = try await rig.request("ignore_next_request", ["peripheral": 1])
                let read = Task { try await connection.gatt.read(serial) }
                _ = try await rig.waitForEvent(named: "ignored")
                try await rig.request("uart_vanish")

                // Well before the ATT transaction timeout (30 s): the transport's end fails it.
                let outcome = try await withTimeout("the pending read", .seconds(10)) { await read.result }
                guard case let .failure(error) = outcome, case let HostError.transportClosed(reason)? = error as? HostError,
                      case let .connectionLost(name, why)? = reason else {
                    Issue.record("the read should fail with transportClosed(connectionLost), got \(outcome)")
                    await host.shutdown()
                    return
                }
                #expect(name == "serial:\(path)")
                #expect(why.contains("hung up"), "\(why)")
                let closed = try await withTimeout("the host's transportClosed event", .seconds(10)) {
                    for await event in events { if case .transportClosed = event { return true } }
                    return false
                }
                #expect(closed)
                // What comes after fails at once, typed.
                await #expect(throws: HostError.self) { _ = try await host.scan(ScanOptions(active: true)) }
                try await withTimeout("the host's shutdown", .seconds(10)) { await host.shutdown() }
            }
        }
    }
}
