#if canImport(Glibc)
import BluetoothCore
import BluetoothTransport
import Foundation
import Glibc
import Logging
import Synchronization

/// Serves a ``VirtualController`` over HCI/TCP with H4 framing, so that a host in another
/// process (Bumble, BlueZ's `btattach`-style tools, another Bluejay) can drive it: the same
/// bytes a UART controller would exchange, over a TCP connection.
///
/// One client at a time: while a client is connected, further connections are accepted and
/// closed at once. When the client leaves, the controller is reset (unless
/// `resetsControllerWhenClientLeaves` is false), so its links drop and the next host starts
/// clean.
///
/// ```swift
/// let server = VirtualControllerServer(controller: controller)      // 127.0.0.1, any free port
/// let port = try server.start()
/// // Bumble: transport "tcp-client:127.0.0.1:\(port)"; Bluejay: server.transportSpecification
/// server.stop()
/// ```
///
/// Call ``stop()`` when done: the accept thread keeps the server alive until then.
///
/// For the CLI (`bluejay virtual --listen tcp:127.0.0.1:PORT`): create a ``VirtualLink``, add
/// the controllers, make one server per controller with the requested port (0 for any),
/// ``start()`` them, print ``transportSpecification``, and ``stop()`` on exit.
public final class VirtualControllerServer: Sendable {
    /// The controller served.
    public let controller: VirtualController
    /// The IPv4 address listened on (`127.0.0.1` by default).
    public let host: String
    /// Reset the controller when a client disconnects.
    public let resetsControllerWhenClientLeaves: Bool
    /// Where the HCI traffic of every client is recorded (as the client host sees it), if anywhere.
    public let capture: HCICapture?
    private let requestedPort: UInt16
    private let logger: Logger
    private let state = Mutex(State())
    private let acceptLoopDone = DispatchGroup()

    private struct State {
        var listener: Int32?
        var stopPipe: (read: Int32, write: Int32)?
        var port: UInt16?
        var client: ClientBridge?
        var isStopped = false
        var clientsServed = 0
    }

    /// - Parameters:
    ///   - resetsControllerWhenClientLeaves: reset the controller when a client disconnects, so the next one starts clean.
    ///   - logger: where connections and failures are logged.
    ///   - controller: the controller to serve.
    ///   - host: an IPv4 address to listen on; keep the loopback address unless the
    ///     controller must be reachable from elsewhere.
    ///   - port: the TCP port; 0 picks a free one (read it from ``port`` after ``start()``).
    ///   - capture: records the packets between the clients and the controller (closed by
    ///     the caller, after ``stop()``).
    public init(controller: VirtualController, host: String = "127.0.0.1", port: UInt16 = 0,
                resetsControllerWhenClientLeaves: Bool = true, capture: HCICapture? = nil,
                logger: Logger = Logger(label: "bluejay.virtual.server")) {
        self.controller = controller
        self.capture = capture
        self.host = host
        requestedPort = port
        self.resetsControllerWhenClientLeaves = resetsControllerWhenClientLeaves
        self.logger = logger
    }

    deinit {
        stop()
    }

    /// The port listened on, once started.
    public var port: UInt16? { state.withLock { $0.port } }

    /// `tcp:HOST:PORT`, the transport specification a Bluejay host opens, once started.
    public var transportSpecification: String? { port.map { "tcp:\(host):\($0)" } }

    /// `tcp-client:HOST:PORT`, the transport name Bumble opens, once started.
    public var bumbleTransport: String? { port.map { "tcp-client:\(host):\($0)" } }

    /// Whether a client is connected now.
    public var hasClient: Bool { state.withLock { $0.client != nil } }

    /// How many clients have connected so far.
    public var clientsServed: Int { state.withLock { $0.clientsServed } }

    /// Starts listening and returns the port. Calling it again returns the same port.
    @discardableResult
    public func start() throws(TransportError) -> UInt16 {
        let name = "tcp-server:\(host):\(requestedPort)"
        if let port = state.withLock({ $0.port }) { return port }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = requestedPort.bigEndian
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else {
            throw .invalidSpecification(name, reason: "\(host) is not an IPv4 address")
        }
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard listener >= 0 else { throw .openFailed(name, errno: errno, hint: "cannot create a socket") }
        var enabled: Int32 = 1
        _ = setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &enabled, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(listener, 4) == 0 else {
            let code = errno
            _ = Glibc.close(listener)
            throw .openFailed(name, errno: code, hint: code == EADDRINUSE ? "Port \(requestedPort) is in use; pass 0 for any free port" : "")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        let port = UInt16(bigEndian: actual.sin_port)
        var pipe: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0, &pipe) == 0 else {
            let code = errno
            _ = Glibc.close(listener)
            throw .openFailed(name, errno: code, hint: "cannot create the stop pipe")
        }
        state.withLock { state in
            state.listener = listener
            state.stopPipe = (pipe[0], pipe[1])
            state.port = port
        }
        acceptLoopDone.enter()
        let stopRead = pipe[0]
        let thread = Thread { [self] in
            acceptLoop(listener: listener, stop: stopRead)
            acceptLoopDone.leave()
        }
        thread.name = "bluejay-virtual-server"
        thread.start()
        logger.info("serving \(controller) on tcp:\(host):\(port)")
        return port
    }

    /// Stops listening and disconnects the client. Idempotent; blocks until the accept
    /// thread has ended.
    public func stop() {
        let (stopPipe, client, wasRunning) = state.withLock { state -> ((read: Int32, write: Int32)?, ClientBridge?, Bool) in
            defer {
                state.isStopped = true
                state.client = nil
            }
            return (state.stopPipe, state.client, !state.isStopped && state.listener != nil)
        }
        if wasRunning, let stopPipe {
            var byte: UInt8 = 1
            _ = Glibc.write(stopPipe.write, &byte, 1)
            acceptLoopDone.wait()
            let listener = state.withLock { state -> Int32? in
                defer {
                    state.listener = nil
                    state.stopPipe = nil
                }
                return state.listener
            }
            if let listener { _ = Glibc.close(listener) }
            _ = Glibc.close(stopPipe.read)
            _ = Glibc.close(stopPipe.write)
        }
        client?.close()
    }

    private func acceptLoop(listener: Int32, stop: Int32) {
        while true {
            var descriptors = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0), pollfd(fd: stop, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&descriptors, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                logger.error("virtual controller server: poll failed (errno \(errno))")
                return
            }
            if descriptors[1].revents != 0 { return }
            guard descriptors[0].revents & Int16(POLLIN) != 0 else { continue }
            let socket = Glibc.accept(listener, nil, nil)
            guard socket >= 0 else { continue }
            _ = fcntl(socket, F_SETFD, FD_CLOEXEC)
            var enabled: Int32 = 1
            _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_NODELAY, &enabled, socklen_t(MemoryLayout<Int32>.size))
            accept(socket)
        }
    }

    private func accept(_ socket: Int32) {
        let busy = state.withLock { $0.client != nil || $0.isStopped }
        guard !busy else {
            logger.warning("virtual controller server: refusing a second client while one is connected")
            _ = Glibc.close(socket)
            return
        }
        let name = "tcp-client:\(host):\(port ?? 0)"
        let client: FileDescriptorTransport
        do {
            client = try FileDescriptorTransport(name: name, fileDescriptor: socket, framing: .stream)
        } catch {
            logger.error("virtual controller server: \(error)")
            return
        }
        let controllerSide: any HCITransport = controller.makeTransport()
        let bridge = ClientBridge(client: client, controllerSide: capture.map { CapturingTransport(controllerSide, capture: $0) } ?? controllerSide)
        state.withLock { state in
            state.client = bridge
            state.clientsServed += 1
        }
        logger.info("virtual controller server: client connected to \(controller)")
        bridge.start { [weak self] in self?.clientDidLeave(bridge) }
    }

    private func clientDidLeave(_ bridge: ClientBridge) {
        let wasCurrent = state.withLock { state -> Bool in
            guard state.client === bridge else { return false }
            state.client = nil
            return true
        }
        logger.info("virtual controller server: client left \(controller)")
        if wasCurrent, resetsControllerWhenClientLeaves { controller.reset() }
    }
}

/// Joins a client's socket to a controller: packets from the client go to the controller,
/// events and data from the controller go to the client.
private final class ClientBridge: Sendable {
    let client: FileDescriptorTransport
    let controllerSide: any HCITransport

    init(client: FileDescriptorTransport, controllerSide: any HCITransport) {
        self.client = client
        self.controllerSide = controllerSide
    }

    func start(onClientLeft: @escaping @Sendable () -> Void) {
        let client = self.client
        let controllerSide = self.controllerSide
        controllerSide.start { event in
            switch event {
            case let .packets(packets): for packet in packets { try? client.send(packet) }
            case .closed: client.close()
            }
        }
        client.start { event in
            switch event {
            case let .packets(packets): for packet in packets { try? controllerSide.send(packet) }
            case .closed:
                controllerSide.close()
                onClientLeft()
            }
        }
    }

    func close() {
        controllerSide.close()
        client.close()
    }
}
#endif
