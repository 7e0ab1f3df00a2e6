import Foundation
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A Linux guest under QEMU with the real kernel's Bluetooth stack, for what only a real
/// kernel shows (the HCI user channel, later BlueZ). Its `hci0` is a controller on the host,
/// reached over TCP (a Bumble rig's controller A), which `hci_vhci` makes a kernel adapter.
/// `scripts/linux-guest.sh` builds and caches the guest; docs/LINUX-GUEST.md describes it.
///
/// ``boot(_:)`` starts QEMU and waits for the guest's `bluejay-guest: ready` line on the
/// console; ``run(_:environment:timeout:)`` runs a bash script in the guest (through the
/// guest's agent on a virtio-serial port) and returns its status and output, as many times as
/// wanted per boot, also concurrently; ``shutdown()`` powers the guest off and always ends QEMU.
/// QEMU runs tethered to this process: should the tests die, QEMU ends with them.
final class LinuxGuest: Sendable {
    /// A host folder the guest mounts at `/mnt/TAG` over virtio-9p.
    struct Share: Sendable {
        var tag: String
        var path: String
        var readOnly = true
    }

    struct Configuration: Sendable {
        /// The H4 controller on 127.0.0.1 that becomes `hci0` (QEMU connects to it at start).
        var controllerPort: Int
        var shares: [Share] = []
        /// Variables every script run gets (``run(_:environment:timeout:)`` adds its own).
        var environment: [String: String] = [:]
        var cpus = 2
        var memoryMiB = 1536
        /// From QEMU's start to the `ready` line: emulation on a loaded machine is slow (about
        /// 25 s alone, minutes while builds run beside it).
        var bootTimeout: Duration = .seconds(300)
    }

    private let qemu: ManagedProcess<String>
    private let agent: LineBuffer<RigEvent>
    private let agentSocket: Int32
    private let agentOutput: FileHandle
    private let runDirectory: URL
    private let environment: [String: String]
    private let nextRequest = Mutex(1)
    /// How long the boot took, to the `ready` line.
    let bootDuration: Duration

    /// The console's ready line, and the line a failed boot prints instead.
    static let readyLine = "bluejay-guest: ready"
    static let failedLine = "bluejay-guest: failed"

    // MARK: The built guest

    /// `BLUEJAY_GUEST_REQUIRED=1` (scripts/test.sh sets it after building the guest): a guest
    /// that is not there is a failure, not a skip.
    static var isRequired: Bool { ProcessInfo.processInfo.environment["BLUEJAY_GUEST_REQUIRED"] == "1" }

    /// The cached guest's folder, as `scripts/linux-guest.sh path` reports it (`nil`: not built
    /// for the current scripts, or QEMU is missing).
    static func builtGuest() -> URL? {
        guard qemuExecutable() != nil else { return nil }
        let script = BumbleRig.packageRoot().appendingPathComponent("scripts/linux-guest.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [script.path, "path"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        let path = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return path.isEmpty ? nil : URL(fileURLWithPath: path)
    }

    /// Whether the guest tests run here: the guest is built, or it must be (then a missing
    /// guest fails the suite with the way to build it).
    static var shouldRun: Bool { isRequired || builtGuest() != nil }

    static func qemuExecutable() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return (path.split(separator: ":").map(String.init) + ["/usr/bin"])
            .map { URL(fileURLWithPath: $0).appendingPathComponent("qemu-system-x86_64") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    // MARK: Sharing this build's executables

    /// The shares and environment that let the guest run `executables` (built here, against
    /// the toolchain's Swift runtime): their folder at /mnt/bin on PATH, and each folder of the
    /// Swift runtime that `ldd` finds outside the system's library folders at /mnt/swiftN on
    /// LD_LIBRARY_PATH. The guest is Debian 12 like the host, so glibc matches.
    static func sharesRunning(_ executable: URL) throws -> (shares: [Share], environment: [String: String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/ldd")
        process.arguments = [executable.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var runtimeFolders: [String] = []
        for line in text.split(separator: "\n") {
            guard let arrow = line.range(of: "=> ") else { continue }
            let path = line[arrow.upperBound...].split(separator: " ").first.map(String.init) ?? ""
            let folder = (path as NSString).deletingLastPathComponent
            let system = ["/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"]
            guard path.hasPrefix("/"), !system.contains(folder), !runtimeFolders.contains(folder) else { continue }
            runtimeFolders.append(folder)
        }
        var shares = [Share(tag: "bin", path: executable.deletingLastPathComponent().path)]
        var libraryPath: [String] = []
        for (index, folder) in runtimeFolders.enumerated() {
            shares.append(Share(tag: "swift\(index)", path: folder))
            libraryPath.append("/mnt/swift\(index)")
        }
        return (shares, [
            "PATH": "/mnt/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "LD_LIBRARY_PATH": libraryPath.joined(separator: ":"),
        ])
    }

    // MARK: Booting

    /// Boots the guest and waits until it is ready (hci0 set up by the kernel, the agent
    /// listening). Throws, with the console's last lines, when the guest is not built, QEMU
    /// cannot start, or the guest fails or does not come up within the boot timeout.
    static func boot(_ configuration: Configuration) async throws -> LinuxGuest {
        guard let directory = builtGuest(), let qemu = qemuExecutable() else {
            throw RigError(message: "The Linux guest is not built (or QEMU is missing): run `bash scripts/linux-guest.sh build` "
                + "(make test does; it needs root or passwordless sudo for apt-get and debootstrap)", context: "")
        }
        let runDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("bluejay-guest-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: runDirectory, withIntermediateDirectories: true)
        let agentPath = runDirectory.appendingPathComponent("agent.sock").path
        var arguments = [
            "-accel", "tcg", "-cpu", "max", "-smp", String(configuration.cpus), "-m", String(configuration.memoryMiB),
            "-display", "none", "-nodefaults", "-no-reboot", "-nic", "none",
            "-chardev", "stdio,id=console,signal=off", "-serial", "chardev:console",
            "-kernel", directory.appendingPathComponent("vmlinuz").path,
            "-initrd", directory.appendingPathComponent("initrd.img").path,
            "-append", "console=ttyS0 quiet cryptomgr.notests panic=-1",
            "-fsdev", "local,id=rootfs,path=\(directory.appendingPathComponent("rootfs").path),security_model=none,readonly=on",
            "-device", "virtio-9p-pci,fsdev=rootfs,mount_tag=rootfs",
            "-device", "virtio-serial-pci",
            "-chardev", "socket,id=bt0,host=127.0.0.1,port=\(configuration.controllerPort),nodelay=on",
            "-device", "virtserialport,chardev=bt0,name=bt0",
            "-chardev", "socket,id=ctl,path=\(agentPath),server=on,wait=off",
            "-device", "virtserialport,chardev=ctl,name=ctl",
        ]
        for (index, share) in configuration.shares.enumerated() {
            arguments += [
                "-fsdev", "local,id=share\(index),path=\(share.path),security_model=none\(share.readOnly ? ",readonly=on" : "")",
                "-device", "virtio-9p-pci,fsdev=share\(index),mount_tag=\(share.tag)",
            ]
        }
        let started = ContinuousClock.now
        let process = try ManagedProcess<String>.launch(
            name: "Linux guest",
            // Tethered: QEMU ends when this process closes the wrapper's stdin, which the kernel
            // does also when the tests die; the console (QEMU's stdout) comes through.
            executable: ChildTether.shell,
            arguments: ChildTether.arguments(running: qemu.path, arguments),
            input: .pipe,
            stopping: StopSequence(farewell: nil, signals: [
                .init(number: SIGTERM, after: StopSequence.gracePeriod), .init(number: SIGKILL, after: StopSequence.gracePeriod),
            ]),
            logName: "bluejay-guest",
            // The serial console ends lines with CR LF.
            parse: { line in line.trimmingCharacters(in: CharacterSet(charactersIn: "\r")) }
        )
        do {
            let line = try await process.wait(for: "the guest's ready line", consuming: false, timeout: configuration.bootTimeout) {
                $0.hasPrefix(readyLine) || $0.hasPrefix(failedLine)
            }
            guard line.hasPrefix(readyLine) else { throw RigError(message: "The Linux guest did not boot: \(line)", context: process.context()) }
            let (socket, output) = try connectAgent(path: agentPath, context: process.context())
            let agent = LineBuffer<RigEvent>(name: "guest agent", logPath: process.logPath) { line in
                line.trimmingCharacters(in: .whitespaces).isEmpty ? nil : RigEvent(line: line)
            }
            agent.startReading(output, threadName: "guest agent")
            let guest = LinuxGuest(qemu: process, agent: agent, agentSocket: socket, agentOutput: output, runDirectory: runDirectory,
                                   environment: configuration.environment, bootDuration: ContinuousClock.now - started)
            do {
                _ = try await agent.wait(description: "the agent's hello", consuming: true, matching: { $0.name == "hello" }, timeout: .seconds(60))
            } catch {
                await guest.shutdown()
                throw error
            }
            return guest
        } catch {
            await process.shutdown()
            try? FileManager.default.removeItem(at: runDirectory)
            throw error
        }
    }

    private init(qemu: ManagedProcess<String>, agent: LineBuffer<RigEvent>, agentSocket: Int32, agentOutput: FileHandle, runDirectory: URL,
                 environment: [String: String], bootDuration: Duration) {
        self.qemu = qemu
        self.agent = agent
        self.agentSocket = agentSocket
        self.agentOutput = agentOutput
        self.runDirectory = runDirectory
        self.environment = environment
        self.bootDuration = bootDuration
    }

    /// Connects to the agent's port (QEMU listens on a Unix socket for it).
    private static func connectAgent(path: String, context: String) throws -> (Int32, FileHandle) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw RigError(message: "Cannot make a Unix socket: errno \(errno)", context: context) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard path.utf8.count < capacity else {
            close(descriptor)
            throw RigError(message: "The agent socket's path is too long: \(path)", context: context)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: path.utf8)
            raw[path.utf8.count] = 0
        }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let code = errno
            close(descriptor)
            throw RigError(message: "Cannot connect to the guest agent at \(path): errno \(code)", context: context)
        }
        return (descriptor, FileHandle(fileDescriptor: descriptor, closeOnDealloc: true))
    }

    // MARK: Running commands

    /// Runs `script` with bash in the guest (as root, in /root, stdin from /dev/null) and
    /// returns its exit status and output. A script still running after `timeout` is killed
    /// with its process group: its status is -9 and its stderr says so. Several runs may be
    /// under way at once. A script that leaves a process in the background must redirect
    /// that process's output, or the answer waits for it.
    func run(_ script: String, environment: [String: String] = [:], timeout: Duration = .seconds(120)) async throws -> CLIResult {
        let id = nextRequest.withLock { next in
            defer { next += 1 }
            return next
        }
        let seconds = timeout / .seconds(1)
        let request = RigJSON.object([
            "id": .number(Double(id)),
            "run": .string(script),
            "timeout": .number(seconds),
            "env": .object(self.environment.merging(environment) { $1 }.mapValues(RigJSON.string)),
        ])
        do {
            try agentOutput.write(contentsOf: Data((request.description + "\n").utf8))
        } catch {
            throw RigError(message: "Cannot send a command to the guest agent: \(error)", context: diagnostics)
        }
        // The agent's own limit ends the script; this one only guards against a dead guest.
        let reply = try await agent.wait(description: "the answer to command \(id)", consuming: true,
                                         matching: { $0.int("id") == id }, timeout: timeout + .seconds(60))
        var stderr = reply.string("stderr") ?? ""
        if reply.bool("timed_out") == true { stderr += "\nagent: the script was killed after \(timeout)" }
        return CLIResult(status: Int32(reply.int("status") ?? -1), stdout: reply.string("stdout") ?? "", stderr: stderr)
    }

    /// The console's last lines and the tail of QEMU's log, for failure messages.
    var diagnostics: String { qemu.context() }

    // MARK: Stopping

    /// Powers the guest off (through the agent) and waits for QEMU to end; ends QEMU anyway
    /// when the guest does not go within a grace period. Idempotent.
    func shutdown() async {
        let id = nextRequest.withLock { next in
            defer { next += 1 }
            return next
        }
        let request = RigJSON.object(["id": .number(Double(id)), "poweroff": .bool(true)])
        if (try? agentOutput.write(contentsOf: Data((request.description + "\n").utf8))) != nil {
            _ = try? await agent.wait(description: "the power-off answer", consuming: true, matching: { $0.int("id") == id },
                                      timeout: .seconds(10))
            _ = try? await qemu.exitStatus(within: .seconds(20))
        }
        await qemu.shutdown()
        // Ends the agent's reader thread, which then releases the socket.
        Glibc.shutdown(agentSocket, Int32(SHUT_RDWR))
        try? FileManager.default.removeItem(at: runDirectory)
    }
}

extension LinuxGuest: TestResource {}
