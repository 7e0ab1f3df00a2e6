import BluetoothCore
import BluetoothHost
import BluetoothPeripheral
import BluetoothTransport
import BluetoothVirtual
import GATTProfiles
import Logging
import Synchronization

/// A simulated heart-rate sensor: Heart Rate Measurement (2A37) notified at a configurable
/// rate with a changing heart rate (8-bit, or 16-bit above 255 or on request), Body Sensor
/// Location (2A38) to read and write, Heart Rate Control Point (2A39), Device Information
/// with a serial number, and Battery Level (2A19, read and notify).
///
/// ```swift
/// let sensor = try await simulator.addHeartRateSensor(.init(heartRate: .counting(from: 60), measurementInterval: .milliseconds(50)))
/// sensor.setHeartRate(300)            // now sent in the 16-bit form
/// try await sensor.setBatteryLevel(50) // notifies subscribers
/// ```
public final class HeartRateSensor: Sendable {
    /// The peripheral underneath: values, events, faults, position.
    public let device: SimulatedDevice
    /// What it was started with.
    public let configuration: Configuration
    private let state: Mutex<State>

    private struct State {
        var generator: HeartRateGenerator
        var uses16BitFormat: Bool
        var current: UInt16?
        var measurementsSent = 0
        var loop: Task<Void, Never>?
    }

    private let energy: EnergyExpendedCounter

    init(device: SimulatedDevice, configuration: Configuration, energy: EnergyExpendedCounter) {
        self.device = device
        self.configuration = configuration
        self.energy = energy
        state = Mutex(State(generator: HeartRateGenerator(configuration.heartRate), uses16BitFormat: configuration.uses16BitFormat))
        if let interval = configuration.measurementInterval { startGenerating(every: interval) }
    }

    deinit {
        state.withLock { $0.loop }?.cancel()
    }

    /// Starts a sensor on a new controller of `link`.
    public static func start(on link: VirtualLink, configuration: Configuration = Configuration(),
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> HeartRateSensor {
        let energy = EnergyExpendedCounter()
        return HeartRateSensor(device: try await SimulatedDevice.start(declaration(configuration, energy: energy), on: link, logger: logger),
                               configuration: configuration, energy: energy)
    }

    /// Starts a sensor on any controller (a real adapter, Bumble…), e.g. for `bluejay sensor`.
    public static func start(transport: any HCITransport, configuration: Configuration = Configuration(),
                             logger: Logger = Logger(label: "bluejay.simulator")) async throws(SimulatorError) -> HeartRateSensor {
        let energy = EnergyExpendedCounter()
        return HeartRateSensor(device: try await SimulatedDevice.start(declaration(configuration, energy: energy), transport: transport, logger: logger),
                               configuration: configuration, energy: energy)
    }

    /// Stops the measurements and the peripheral.
    public func stop() async {
        stopGenerating()
        await device.stop()
    }

    // MARK: Heart rate

    /// The heart rate of the last measurement (`nil` before the first).
    public var currentHeartRate: UInt16? { state.withLock { $0.current } }

    /// How many measurements reached at least one subscriber.
    public var measurementsSent: Int { state.withLock { $0.measurementsSent } }

    /// Sends this heart rate from now on (above 255 in the 16-bit form).
    public func setHeartRate(_ bpm: UInt16) {
        setHeartRateSource(.constant(bpm))
    }

    /// Takes the heart rates from `source` from now on.
    public func setHeartRateSource(_ source: HeartRateSource) {
        state.withLock { $0.generator = HeartRateGenerator(source) }
    }

    /// Sends every heart rate in the 16-bit form (`true`), or only those above 255.
    public func setUses16BitFormat(_ uses16Bit: Bool) {
        state.withLock { $0.uses16BitFormat = uses16Bit }
    }

    /// Takes the next heart rate and notifies it now; returns the value sent.
    @discardableResult
    public func sendMeasurement() async throws(SimulatorError) -> [UInt8] {
        let (bpm, bytes) = state.withLock { state -> (UInt16, [UInt8]) in
            let bpm = state.generator.next()
            state.current = bpm
            let energyExpended = configuration.reportsEnergyExpended ? energy.increment() : nil
            let bytes = Self.measurementBytes(heartRate: bpm, uses16BitFormat: state.uses16BitFormat, sensorContact: configuration.sensorContact,
                                              energyExpended: energyExpended)
            return (bpm, bytes)
        }
        let delivered = try await device.notify(bytes, on: HeartRateProfile.Measurement.uuid)
        if !delivered.isEmpty { state.withLock { $0.measurementsSent += 1 } }
        device.logger.trace("heart rate \(bpm) bpm to \(delivered.count) central(s)")
        return bytes
    }

    // MARK: Other characteristics

    /// The Body Sensor Location stored now (centrals may have written it).
    public var location: HeartRateProfile.BodySensorLocation? {
        get async {
            guard let byte = await device.value(of: HeartRateProfile.BodySensorLocation.uuid)?.first else { return nil }
            return HeartRateProfile.BodySensorLocation(rawValue: byte)
        }
    }

    /// The Battery Level stored now.
    public var batteryLevel: UInt8? {
        get async { await device.value(of: BatteryProfile.Level.uuid)?.first }
    }

    /// Sets the Battery Level (at most 100) and notifies subscribers.
    public func setBatteryLevel(_ level: UInt8) async throws(SimulatorError) {
        try await device.notify([min(level, 100)], on: BatteryProfile.Level.uuid)
    }

    /// The energy expended reported so far, in kJ (one per measurement; the control point
    /// resets it).
    public var energyExpended: UInt16 { energy.value }

    // MARK: Machinery

    private func startGenerating(every interval: Duration) {
        let clock = device.clock
        let task = Task { [weak self] in
            // Every `interval` from the start, on the device's clock: a late wake-up does not
            // shift the measurements after it.
            var next = clock.now + interval
            while !Task.isCancelled {
                do { try await clock.sleep(until: next) } catch { return }
                next = next + interval
                guard let self else { return }
                do {
                    try await self.sendMeasurement()
                } catch SimulatorError.stopped {
                    return
                } catch {
                    self.device.logger.debug("heart rate measurement not sent: \(error)")
                }
            }
        }
        state.withLock { $0.loop = task }
        device.own(task)
    }

    /// Stops the periodic measurements.
    func stopGenerating() {
        state.withLock { $0.loop }?.cancel()
    }
}

/// The energy expended of a sensor, shared with its control point's write handler, which
/// resets it before the write is answered.
final class EnergyExpendedCounter: Sendable {
    private let count = Mutex<UInt16>(0)

    var value: UInt16 { count.withLock { $0 } }

    /// Counts one measurement and returns the new total.
    func increment() -> UInt16 {
        count.withLock { count in
            count &+= 1
            return count
        }
    }

    func reset() {
        count.withLock { $0 = 0 }
    }
}
