import BluetoothTransport
import Glibc
import Testing

/// A pseudo-terminal pair stands in for the UART: the transport opens the slave like a
/// `/dev/ttyACM0`, and the test plays the controller on the master side.
@Suite("Serial transport", .timeLimit(.minutes(1)))
struct SerialTransportTests {
    struct PseudoTerminal {
        let master: TestDescriptor
        let slave: TestDescriptor
        let path: String

        init() throws {
            var master: Int32 = -1
            var slave: Int32 = -1
            guard openpty(&master, &slave, nil, nil, nil) == 0 else {
                throw TestFailure("openpty failed: \(String(cString: strerror(errno)))")
            }
            self.master = TestDescriptor(master)
            self.slave = TestDescriptor(slave)
            // ttyname_r, not ttyname: tests run in parallel and ttyname shares one buffer.
            var name = [CChar](repeating: 0, count: 256)
            let status = ttyname_r(slave, &name, name.count)
            guard status == 0 else { throw TestFailure("ttyname_r failed: \(String(cString: strerror(status)))") }
            path = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    @Test func roundTripAt115200Baud() async throws {
        let terminal = try PseudoTerminal()
        let transport = try SystemTransports.open("serial:\(terminal.path)@115200")
        defer { transport.closeInBackground() }
        #expect(transport.name == "serial:\(terminal.path)@115200")
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)

        // Raw mode: bytes such as 0x0A or 0x0D must pass unchanged (no CR/LF translation).
        let command = H4Packet(.command, [0x01, 0x20, 0x04, 0x0A, 0x0D, 0x03, 0x7F])
        try transport.send(command)
        #expect(try terminal.master.readExactly(command.framed.count) == command.framed)

        let reply = H4DeframerTests.resetComplete.framed + H4DeframerTests.longACL.framed
        for range in [0..<2, 2..<8, 8..<reply.count] {
            try terminal.master.writeAll(Array(reply[range]))
        }
        let events = try await recorder.waitForEvents(count: 2)
        #expect(events.compactMap(\.packet) == [H4DeframerTests.resetComplete, H4DeframerTests.longACL])
    }

    @Test func configuresRaw8N1WithHardwareFlowControl() throws {
        let terminal = try PseudoTerminal()
        let transport = try SerialTransport.open(path: terminal.path, baudRate: 115_200)
        defer { transport.closeInBackground() }
        // The settings belong to the terminal, so the test's own slave descriptor sees them.
        var options = termios()
        #expect(tcgetattr(terminal.slave.raw, &options) == 0)
        #expect(cfgetospeed(&options) == speed_t(B115200))
        #expect(cfgetispeed(&options) == speed_t(B115200))
        #expect(options.c_cflag & tcflag_t(CSIZE) == tcflag_t(CS8))
        #expect(options.c_cflag & tcflag_t(PARENB) == 0)
        #expect(options.c_cflag & tcflag_t(CSTOPB) == 0)
        #expect(options.c_cflag & tcflag_t(CRTSCTS) != 0)
        #expect(options.c_cflag & tcflag_t(CLOCAL) != 0)
        #expect(options.c_cflag & tcflag_t(CREAD) != 0)
        #expect(options.c_lflag & tcflag_t(ICANON | ECHO | ISIG) == 0)
        #expect(options.c_oflag & tcflag_t(OPOST) == 0)
        #expect(options.c_iflag & tcflag_t(ICRNL | IXON) == 0)
    }

    @Test func defaultBaudRateIsOneMegabaud() throws {
        let terminal = try PseudoTerminal()
        let transport = try SystemTransports.open("serial:\(terminal.path)")
        defer { transport.closeInBackground() }
        var options = termios()
        #expect(tcgetattr(terminal.slave.raw, &options) == 0)
        #expect(cfgetospeed(&options) == speed_t(B1000000))
    }

    @Test func hangUpReportsConnectionLost() async throws {
        let terminal = try PseudoTerminal()
        let transport = try SerialTransport.open(path: terminal.path, baudRate: 115_200)
        defer { transport.closeInBackground() }
        terminal.slave.close()
        let recorder = EventRecorder()
        transport.start(receiver: recorder.receiver)
        terminal.master.close()
        guard case let .connectionLost(_, reason)? = try await recorder.waitForClose() else {
            Issue.record("expected connectionLost, got \(recorder.events)")
            return
        }
        // A tty reads end of file when the device hangs up (unplugged, its other end closed).
        #expect(reason.contains("hung up"), "\(reason)")
        try await transport.closeWithTimeout()
        #expect(recorder.closeReasons.count == 1)
    }

    @Test func missingDeviceIsOpenFailedWithAHint() throws {
        let error = try #require(throws: TransportError.self) {
            _ = try SystemTransports.open("serial:/dev/ttyACM-bluejay-missing@115200")
        }
        let failure = try #require(error.openFailure, "got \(error)")
        #expect(failure.errno == ENOENT)
        #expect(failure.hint.contains("ls /dev/ttyACM"))
        #expect(error.description.contains("/dev/ttyACM-bluejay-missing"))
    }

    @Test func notATerminalIsOpenFailed() throws {
        let error = try #require(throws: TransportError.self) {
            _ = try SerialTransport.open(path: "/dev/null", baudRate: 115_200)
        }
        let failure = try #require(error.openFailure, "got \(error)")
        #expect(failure.errno == ENOTTY)
        #expect(failure.hint.contains("not a serial port"))
    }

    @Test(arguments: [12_345, 7_200, 5_000_000])
    func unsupportedBaudRateIsInvalidSpecification(baudRate: Int) throws {
        let terminal = try PseudoTerminal()
        let error = try #require(throws: TransportError.self) {
            _ = try SystemTransports.open(.serial(path: terminal.path, baudRate: baudRate))
        }
        let reason = try #require(error.invalidSpecificationReason, "got \(error)")
        #expect(reason.contains("\(baudRate)"))
        #expect(reason.contains("115200"))
    }

    @Test func supportedBaudRatesCoverTheStandardRange() {
        #expect(SerialTransport.supportedBaudRates.first == 9_600)
        #expect(SerialTransport.supportedBaudRates.last == 4_000_000)
        #expect(SerialTransport.supportedBaudRates.contains(1_000_000))
        #expect(SerialTransport.supportedBaudRates == SerialTransport.supportedBaudRates.sorted())
    }
}
