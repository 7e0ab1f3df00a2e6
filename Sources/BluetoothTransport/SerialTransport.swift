#if canImport(Glibc)
import Glibc

/// Opens H4-over-UART transports (`serial:DEVICE[@BAUD]`), e.g. an nRF52 dongle running
/// Zephyr's `hci_uart` sample.
public enum SerialTransport {
    /// Linux's `B*` speed constants, termios(3), from 9600 to 4000000 baud.
    private static let speeds: [Int: speed_t] = [
        9_600: speed_t(B9600), 19_200: speed_t(B19200), 38_400: speed_t(B38400),
        57_600: speed_t(B57600), 115_200: speed_t(B115200), 230_400: speed_t(B230400),
        460_800: speed_t(B460800), 500_000: speed_t(B500000), 576_000: speed_t(B576000),
        921_600: speed_t(B921600), 1_000_000: speed_t(B1000000), 1_152_000: speed_t(B1152000),
        1_500_000: speed_t(B1500000), 2_000_000: speed_t(B2000000), 2_500_000: speed_t(B2500000),
        3_000_000: speed_t(B3000000), 3_500_000: speed_t(B3500000), 4_000_000: speed_t(B4000000),
    ]

    /// The baud rates ``open(path:baudRate:)`` accepts, ascending.
    public static let supportedBaudRates: [Int] = speeds.keys.sorted()

    /// Opens `path` in raw mode: 8 data bits, no parity, 1 stop bit, RTS/CTS hardware flow
    /// control (which Zephyr's `hci_uart` and most HCI UART firmware expect), modem control
    /// lines ignored. Bytes already waiting in the port are discarded so framing starts clean.
    public static func open(path: String, baudRate: Int = TransportSpecification.defaultSerialBaudRate) throws(TransportError) -> FileDescriptorTransport {
        let name = TransportSpecification.serial(path: path, baudRate: baudRate).description
        guard let speed = speeds[baudRate] else {
            let rates = supportedBaudRates.map(String.init).joined(separator: ", ")
            throw .invalidSpecification(name, reason: "unsupported baud rate \(baudRate); use one of \(rates)")
        }
        // O_NOCTTY: the port must not become this process's controlling terminal.
        // O_NONBLOCK: do not wait for carrier detect while opening (CLOCAL is set below).
        let device = Glibc.open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard device >= 0 else {
            let code = errno
            throw .openFailed(name, errno: code, hint: hint(for: code, path: path))
        }
        do throws(SystemCallError) {
            try configure(device, speed: speed)
        } catch {
            SystemCalls.closeDescriptor(device)
            throw .openFailed(name, errno: error.code, hint: hint(for: error.code, path: path))
        }
        return try FileDescriptorTransport(name: name, fileDescriptor: device, framing: .stream)
    }

    private static func configure(_ device: Int32, speed: speed_t) throws(SystemCallError) {
        var options = termios()
        guard tcgetattr(device, &options) == 0 else { throw .current }
        // cfmakeraw(3): no echo, no line editing, no signals, no CR/LF translation, 8 bits,
        // no parity. The descriptor is non-blocking and polled, so VMIN/VTIME do not matter.
        cfmakeraw(&options)
        options.c_cflag &= ~tcflag_t(CSTOPB)
        options.c_cflag |= tcflag_t(CLOCAL) | tcflag_t(CREAD) | tcflag_t(CRTSCTS)
        guard cfsetispeed(&options, speed) == 0, cfsetospeed(&options, speed) == 0 else { throw .current }
        guard tcsetattr(device, TCSANOW, &options) == 0 else { throw .current }
        // tcsetattr(3) succeeds if *any* change was applied: read back what the driver took.
        var applied = termios()
        guard tcgetattr(device, &applied) == 0 else { throw .current }
        guard cfgetospeed(&applied) == speed else { throw SystemCallError(code: EINVAL) }
        _ = tcflush(device, TCIOFLUSH)
    }

    static func hint(for code: Int32, path: String) -> String {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            return "No such device; check the path (ls /dev/ttyACM* /dev/ttyUSB*) and that the controller is plugged in"
        case EACCES, EPERM:
            return "Permission denied; add your user to the dialout group (`sudo usermod -aG dialout $USER`, then log in again)"
        case EBUSY:
            return "The port is in use by another program (ModemManager often grabs new /dev/ttyACM devices)"
        case ENOTTY:
            return "\(path) is not a serial port"
        case EINVAL:
            return "The serial driver did not accept these settings; try another baud rate"
        default:
            return ""
        }
    }
}
#endif
