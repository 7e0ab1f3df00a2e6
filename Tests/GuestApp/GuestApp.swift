import Bluejay
import Foundation

// A small app on the Bluejay API, run inside the Linux guest over the kernel's HCI user
// channel (`--hci hci0`) by the Linux guest tests (Tests/InteropTests/LinuxGuestTests.swift):
// it scans for the rig's peripheral by name, connects, reads the serial number (with the async
// API, then the callback API), writes the body sensor location (callback API) and reads it
// back, listens to the heart rate for `--notifications` values, disconnects and stops. Each
// step prints one JSON object (`{"step": …}`); a failure prints `{"step": "error", "message": …}`
// and exits 1.
//
//     BluejayGuestApp --hci hci0 --name "Bluejay Peer 1" --notifications 3
//
// `--measure` (the speed test in BlueZGuestTests) reads the serial number `--reads` more times
// and prints one `reads` and one `notifications` step with the CPU time they took instead of a
// step per notification: this process's, plus that of the processes in `--pids` (bluetoothd
// and dbus-daemon, which do part of the work over BlueZ).
//
// `--peripheral` runs the peripheral role on BlueZ instead (PeripheralApp.swift), `--reconnect`
// auto-reconnect and listen restore (ReconnectApp.swift), `--service-changed` Service Changed
// (ServiceChangedApp.swift).

let heartRateService = ServiceIdentifier(uuid: "180D")
let heartRate = CharacteristicIdentifier(uuid: "2A37", service: heartRateService)
let bodySensorLocation = CharacteristicIdentifier(uuid: "2A38", service: heartRateService)
let serialNumber = CharacteristicIdentifier(uuid: "2A25", service: ServiceIdentifier(uuid: "180A"))

func emit(_ step: String, _ fields: [String: Any] = [:]) {
    var object = fields
    object["step"] = step
    let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(data + Data("\n".utf8))
}

/// CPU time (user and system) of this process and of `pids`, in microseconds. Another
/// process's comes from /proc/PID/stat (fields 14 and 15, in clock ticks).
func cpuMicroseconds(pids: [Int]) -> Int {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    var total = (Int(usage.ru_utime.tv_sec) + Int(usage.ru_stime.tv_sec)) * 1_000_000 + Int(usage.ru_utime.tv_usec) + Int(usage.ru_stime.tv_usec)
    let ticksPerSecond = max(1, sysconf(Int32(_SC_CLK_TCK)))
    for pid in pids {
        // The command name (field 2) may hold spaces: count fields after its closing parenthesis.
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let end = stat.lastIndex(of: ")") else { continue }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { continue }
        total += (user + system) * 1_000_000 / ticksPerSecond
    }
    return total
}

func option(_ name: String, default value: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    return arguments[index + 1]
}

struct AppFailure: Error, CustomStringConvertible {
    var description: String
}

/// Waits for Bluetooth and scans (at most 30 s) for the peripheral named `name`: the steps
/// `ready` and `found`.
func findPeripheral(named name: String, with bluejay: Bluejay) async throws -> PeripheralIdentifier {
    try await bluejay.waitUntilReady()
    emit("ready")
    for try await event in bluejay.scan(duration: 30) {
        if case let .discovered(discovery) = event, discovery.localName == name {
            emit("found", ["address": "\(discovery.peripheralIdentifier.address.address)", "name": name])
            return discovery.peripheralIdentifier
        }
    }
    throw AppFailure(description: "the scan ended without \(name)")
}

/// `body`'s answer, or `nil` if it has none within `limit` (then it is cancelled).
func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async -> T?) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

func run(_ bluejay: Bluejay) async throws {
    let name = option("--name", default: "Bluejay Peer 1")
    let notificationCount = Int(option("--notifications", default: "3")) ?? 3
    let measuring = CommandLine.arguments.contains("--measure")
    let readCount = Int(option("--reads", default: "0")) ?? 0
    let pids = option("--pids", default: "").split(separator: ",").compactMap { Int($0) }

    let peripheral = try await findPeripheral(named: name, with: bluejay)

    try await bluejay.connect(peripheral, timeout: .seconds(30))
    emit("connected")

    let serial: String = try await bluejay.read(from: serialNumber)
    // The seeds' callback API as well: over our host its read begins on the calling thread and
    // is answered from the transport's reader thread (the kernel's user channel here).
    let calledBack: String = try await withCheckedThrowingContinuation { continuation in
        bluejay.read(from: serialNumber) { (result: ReadResult<String>) in continuation.resume(with: result) }
    }
    emit("read", ["serial": serial, "callback_serial": calledBack])
    if measuring {
        let before = cpuMicroseconds(pids: pids)
        for _ in 0..<readCount {
            let again: String = try await bluejay.read(from: serialNumber)
            guard again == serial else { throw AppFailure(description: "read \(again) after \(serial)") }
        }
        emit("reads", ["count": readCount, "cpu_us": cpuMicroseconds(pids: pids) - before])
    }

    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        bluejay.write(to: bodySensorLocation, value: UInt8(3)) { result in continuation.resume(with: result) }
    }
    let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
    emit("written", ["location": Int(location)])

    let values: ValueStream<Data> = try await bluejay.listen(to: heartRate)
    emit("listening")
    let before = cpuMicroseconds(pids: pids)
    var received = 0
    for try await value in values {
        if !measuring { emit("notification", ["value": value.map { String(format: "%02x", $0) }.joined()]) }
        received += 1
        if received == notificationCount { break }
    }
    if measuring { emit("notifications", ["count": received, "cpu_us": cpuMicroseconds(pids: pids) - before]) }
    guard received == notificationCount else {
        throw AppFailure(description: "the listen ended after \(received) of \(notificationCount) notifications")
    }

    try await bluejay.disconnect()
    emit("disconnected")
}

@main
enum GuestApp {
    static func main() async {
        if CommandLine.arguments.contains("--peripheral") {
            do {
                try await GuestPeripheral.run()
                emit("stopped")
            } catch {
                emit("error", ["message": "\(error)"])
                exit(1)
            }
            return
        }
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .specification(option("--hci", default: "hci0")), operationTimeout: .seconds(30))))
        do {
            if CommandLine.arguments.contains("--reconnect") {
                try await GuestReconnect.run(bluejay)
            } else if CommandLine.arguments.contains("--service-changed") {
                try await GuestServiceChanged.run(bluejay)
            } else {
                try await run(bluejay)
            }
            await bluejay.stop()
            emit("stopped")
        } catch {
            emit("error", ["message": "\(error)"])
            await bluejay.stop()
            exit(1)
        }
    }
}
