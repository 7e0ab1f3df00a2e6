import Bluejay
import Foundation
import Synchronization

/// What the demo did, for the summary.
struct DemoReport: Sendable {
    var device: String?
    var rssi: Int?
    var mtu: Int?
    var locationBefore: UInt8?
    var locationWritten: UInt8?
    var locationAfter: UInt8?
    var writeRefused: String?
    var heartRate = HeartRateSummary()
    var listenError: String?
    var background = BackgroundResults()
    var scanTime: Duration = .zero
    var connectTime: Duration = .zero
    var exchangeTime: Duration = .zero
    var listenTime: Duration = .zero
    var backgroundTime: Duration = .zero
    var disconnectTime: Duration = .zero
    var totalTime: Duration = .zero

    /// The summary as lines of text.
    var lines: [String] {
        let name = DemoIdentifiers.locationName
        var location = locationBefore.map(name) ?? "-"
        if let locationWritten {
            location += " → \(name(locationWritten))"
            if let locationAfter { location += " (read back \(name(locationAfter)))" }
        } else if let writeRefused {
            location += " (write refused: \(writeRefused))"
        }
        if let restored = background.restoredLocation { location += ", restored to \(name(restored))" }
        var heart = heartRate.description(over: listenTime)
        if let listenError { heart += " (listen failed: \(listenError))" }
        var task: [String] = []
        if let battery = background.battery { task.append("battery \(battery) %") }
        if let serial = background.serial { task.append("serial \(serial)") }
        task += background.notes
        let rows: [(String, String)] = [
            ("device", (device ?? "-") + (rssi.map { ", RSSI \($0) dBm" } ?? "") + (mtu.map { ", ATT MTU \($0)" } ?? "")),
            ("location", location),
            ("heart rate", heart),
            ("background task", task.isEmpty ? "-" : task.joined(separator: ", ")),
            ("timings", "scan \(scanTime.demoSeconds), connect \(connectTime.demoSeconds), read/write \(exchangeTime.demoSeconds), "
                + "background task \(backgroundTime.demoSeconds), disconnect \(disconnectTime.demoSeconds), total \(totalTime.demoSeconds)"),
        ]
        return ["summary"] + rows.map { "  " + $0.0.padding(toLength: 16, withPad: " ", startingAt: 0) + $0.1 }
    }

    /// The summary as one JSON object.
    var json: [String: JSONValue] {
        [
            "device": .optional(device),
            "rssi": .optional(rssi),
            "att_mtu": .optional(mtu),
            "location_before": .optional(locationBefore.map(DemoIdentifiers.locationName)),
            "location_written": .optional(locationWritten.map(DemoIdentifiers.locationName)),
            "location_after": .optional(locationAfter.map(DemoIdentifiers.locationName)),
            "location_restored": .optional(background.restoredLocation.map(DemoIdentifiers.locationName)),
            "write_refused": .optional(writeRefused),
            "readings": .int(heartRate.count),
            "bpm_min": .optional(heartRate.minimum),
            "bpm_max": .optional(heartRate.maximum),
            "bpm_avg": heartRate.average.map(JSONValue.double) ?? .null,
            "battery": .optional(background.battery.map(Int.init)),
            "serial": .optional(background.serial),
            "notes": .array(background.notes.map(JSONValue.string)),
            "seconds": .object([
                "scan": .double(scanTime.demoValue), "connect": .double(connectTime.demoValue), "read_write": .double(exchangeTime.demoValue),
                "listen": .double(listenTime.demoValue), "background_task": .double(backgroundTime.demoValue),
                "disconnect": .double(disconnectTime.demoValue), "total": .double(totalTime.demoValue),
            ]),
        ]
    }
}

/// Heart rates received: count, minimum, maximum, average, the form they came in.
struct HeartRateSummary: Sendable, CustomStringConvertible {
    private(set) var count = 0
    private(set) var minimum: Int?
    private(set) var maximum: Int?
    private(set) var latest: Int?
    private(set) var sixteenBit = 0
    private var total = 0

    mutating func add(_ measurement: HeartRateMeasurement) {
        let bpm = measurement.measurement
        count += 1
        total += bpm
        latest = bpm
        minimum = min(minimum ?? bpm, bpm)
        maximum = max(maximum ?? bpm, bpm)
        if !measurement.isMeasurementIn8bits { sixteenBit += 1 }
    }

    var average: Double? { count > 0 ? Double(total) / Double(count) : nil }

    /// The live line: latest, count, min, max, average.
    var liveLine: String {
        guard let latest, let minimum, let maximum, let average else { return "heart rate: waiting…" }
        return "heart rate \(latest) bpm   \(count) reading\(count == 1 ? "" : "s")   min \(minimum)   max \(maximum)   avg \(String(format: "%.1f", average))"
    }

    var description: String { description(over: nil) }

    /// `"8 readings in 2.00 s: min 77, max 82, avg 79.5 bpm (8-bit)"`.
    func description(over time: Duration?) -> String {
        let readings = "\(count) reading\(count == 1 ? "" : "s")" + (time.map { " in \($0.demoSeconds)" } ?? "")
        guard let minimum, let maximum, let average else { return readings }
        let form = sixteenBit == 0 ? "8-bit" : sixteenBit == count ? "16-bit" : "\(sixteenBit) of them 16-bit"
        return "\(readings): min \(minimum), max \(maximum), avg \(String(format: "%.1f", average)) bpm (\(form))"
    }
}

/// What the background task found.
struct BackgroundResults: Sendable {
    var battery: UInt8?
    var serial: String?
    var restoredLocation: UInt8?
    /// What could not be read, in words.
    var notes: [String] = []
}

extension Duration {
    /// Seconds as a number.
    var demoValue: Double {
        (self / .milliseconds(1)).rounded() / 1000
    }

    /// `"0.21 s"`.
    var demoSeconds: String { String(format: "%.2f s", self / .seconds(1)) }
}
