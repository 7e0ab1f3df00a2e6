import Bluejay
import Foundation

// A small app on the Bluejay API, run inside the Linux guest over the kernel's HCI user
// channel (`--hci hci0`) by the Linux guest tests (Tests/InteropTests/LinuxGuestTests.swift):
// it scans for the rig's peripheral by name, connects, reads the serial number, writes the
// body sensor location and reads it back, listens to the heart rate for `--notifications`
// values, disconnects and stops. Each step prints one JSON object (`{"step": …}`); a failure
// prints `{"step": "error", "message": …}` and exits 1.
//
//     BluejayGuestApp --hci hci0 --name "Bluejay Peer 1" --notifications 3

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

func option(_ name: String, default value: String) -> String {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    return arguments[index + 1]
}

struct AppFailure: Error, CustomStringConvertible {
    var description: String
}

func run(_ bluejay: Bluejay) async throws {
    let name = option("--name", default: "Bluejay Peer 1")
    let notificationCount = Int(option("--notifications", default: "3")) ?? 3

    try await bluejay.waitUntilReady()
    emit("ready")

    var found: ScanDiscovery?
    for try await event in bluejay.scan(duration: 30) {
        if case let .discovered(discovery) = event, discovery.localName == name {
            found = discovery
            break
        }
    }
    guard let peripheral = found?.peripheralIdentifier else { throw AppFailure(description: "the scan ended without \(name)") }
    emit("found", ["address": "\(peripheral.address.address)", "name": name])

    try await bluejay.connect(peripheral, timeout: .seconds(30))
    emit("connected")

    let serial: String = try await bluejay.read(from: serialNumber)
    emit("read", ["serial": serial])

    try await bluejay.write(to: bodySensorLocation, value: UInt8(3))
    let location: UInt8 = try await bluejay.read(from: bodySensorLocation)
    emit("written", ["location": Int(location)])

    let values: ValueStream<Data> = try await bluejay.listen(to: heartRate)
    emit("listening")
    var received = 0
    for try await value in values {
        emit("notification", ["value": value.map { String(format: "%02x", $0) }.joined()])
        received += 1
        if received == notificationCount { break }
    }
    guard received == notificationCount else {
        throw AppFailure(description: "the listen ended after \(received) of \(notificationCount) notifications")
    }

    try await bluejay.disconnect()
    emit("disconnected")
}

@main
enum GuestApp {
    static func main() async {
        let bluejay = Bluejay()
        bluejay.start(mode: .new(StartOptions(transport: .specification(option("--hci", default: "hci0")), operationTimeout: .seconds(30))))
        do {
            try await run(bluejay)
            await bluejay.stop()
            emit("stopped")
        } catch {
            emit("error", ["message": "\(error)"])
            await bluejay.stop()
            exit(1)
        }
    }
}
