import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Dispatch
import Logging
import Synchronization

/// A shared in-process radio medium for ``VirtualController``s: the air between virtual LE
/// devices, with a simulated clock that follows real time (scaled by ``timeScale``), or that
/// moves only when a test advances its `ManualClock`.
///
/// Everything on the link (advertising events, connection events, command handling) runs
/// on one serial dispatch queue, the link's executor; hosts talk to their controllers through
/// ``VirtualControllerTransport``s, which never block on the link.
///
/// ```swift
/// let link = VirtualLink()
/// let central = link.addController(address: BluetoothAddress("C0:00:00:00:00:01")!)
/// let peripheral = link.addController(address: BluetoothAddress("C0:00:00:00:00:02")!,
///                                     position: VirtualPosition(x: 3, y: 0))
/// let host = Host(transport: central.makeTransport())
/// ```
///
/// The link stops when nothing references it any more (its controllers and their
/// transports), or at ``shutdown()``.
public final class VirtualLink: Sendable {
    /// Settings of a link.
    public struct Configuration: Sendable {
        /// Simulated seconds per real second: 1 is real time, 10 runs ten times faster.
        public var timeScale: Double
        /// How signals weaken with distance.
        public var radio: RadioModel
        /// Seeds the link's random numbers (advertising delays, LE Rand) for a repeatable
        /// run; `nil` seeds from the system.
        public var seed: UInt64?
        /// `nil`: simulated time follows real time (scaled by ``timeScale``). A manual clock:
        /// simulated time moves only when the clock is advanced (``timeScale`` is ignored), so
        /// advertising events, connection events and timeouts happen at exact simulated times
        /// however busy the machine is. Simulated time counts from the clock's time when the
        /// link is created.
        public var manualClock: ManualClock?

        public init(timeScale: Double = 1, radio: RadioModel = RadioModel(), seed: UInt64? = nil, manualClock: ManualClock? = nil) {
            self.timeScale = timeScale
            self.radio = radio
            self.seed = seed
            self.manualClock = manualClock
        }
    }

    /// Where the link's simulated time comes from.
    enum TimeSource: Sendable {
        case real(LinkClock)
        case manual(ManualClock, origin: Duration)

        var simulatedNow: Duration {
            switch self {
            case let .real(clock): return clock.simulatedTime(at: .now)
            case let .manual(clock, origin): return clock.now - origin
            }
        }
    }

    struct Engine: Sendable {
        var simulation: LinkSimulation
        var time: TimeSource
        /// Identifies the one wake-up that is current; older ones do nothing when they fire.
        var armedToken: UInt64 = 0
        var armedDeadline: Duration?
        /// The manual clock's alarm for the current wake-up.
        var armedAlarm: ManualClock.Alarm?
        var isShutDown = false
    }

    /// When to wake the link up for its earliest timer.
    enum WakeUp: Sendable {
        case real(ContinuousClock.Instant, token: UInt64)
        case manual(ManualClock, at: Duration, token: UInt64, replacing: ManualClock.Alarm?)
    }

    /// A weak reference to the transport attached to a controller.
    struct Attachment: Sendable {
        weak var transport: VirtualControllerTransport?
    }

    /// The link's serial executor: every change of the simulation happens here.
    let queue: DispatchQueue
    let logger: Logger
    private let engine: Mutex<Engine>
    private let attachments = Mutex<[ControllerID: Attachment]>([:])
    /// Transports the link closed (their controller removed, replaced, the link shut down),
    /// whose `.closed` may still be on its way to their receiver: ``waitUntilDelivered()`` waits
    /// for it too. Weak, and pruned as they go: a closed transport nobody holds is not kept.
    private let closing = Mutex<[Attachment]>([])

    public init(configuration: Configuration = Configuration(), logger: Logger = Logger(label: "bluejay.virtual")) {
        self.logger = logger
        queue = DispatchQueue(label: "bluejay.virtual-link", qos: .userInitiated)
        let random = configuration.seed.map(SeededRandomNumberGenerator.init(seed:)) ?? SeededRandomNumberGenerator()
        let time: TimeSource = configuration.manualClock.map { .manual($0, origin: $0.now) } ?? .real(LinkClock(timeScale: configuration.timeScale))
        engine = Mutex(Engine(simulation: LinkSimulation(radio: configuration.radio, random: random, logger: logger), time: time))
    }

    // MARK: Controllers

    /// Adds a controller to the link.
    /// - Parameters:
    ///   - configuration: the radio, its clock or time scale, and the random seed.
    ///   - name: for logs and the transport name (`virtual:NAME`); defaults to the address.
    ///   - address: its public address (Read BD_ADDR).
    ///   - position: where it is, in metres.
    @discardableResult
    public func addController(name: String? = nil, address: BluetoothAddress, configuration: VirtualController.Configuration = .init(),
                              position: VirtualPosition = .origin) -> VirtualController {
        let label = name ?? address.description
        let id = performSync { $0.addController(name: label, address: address, configuration: configuration, position: position) }
        return VirtualController(link: self, id: id, name: label, address: address)
    }

    /// Takes a controller off the link, like switching it off: its host's transport closes,
    /// and its peers lose their connections to it by supervision timeout.
    public func removeController(_ controller: VirtualController) {
        guard controller.link === self else { return }
        performSync { $0.removeController(controller.id) }
        let transport = attachments.withLock { $0.removeValue(forKey: controller.id)?.transport }
        if let transport { close(transport, reason: "the virtual controller was removed from its link") }
    }

    /// Finishes a transport the link let go of, and remembers it until its `.closed` is delivered.
    private func close(_ transport: VirtualControllerTransport, reason: String) {
        transport.finish(reason: .connectionLost(transport.name, reason: reason))
        closing.withLock { closing in
            closing.removeAll { $0.transport == nil }
            closing.append(Attachment(transport: transport))
        }
    }

    /// The controllers on the link.
    public var controllers: [VirtualController] {
        let entries = engine.withLock { engine in
            engine.simulation.controllers.values.sorted { $0.id < $1.id }.map { ($0.id, $0.name, $0.publicAddress) }
        }
        return entries.map { VirtualController(link: self, id: $0.0, name: $0.1, address: $0.2) }
    }

    // MARK: Time

    /// Simulated time since the link was created.
    public var now: Duration {
        engine.withLock { $0.time.simulatedNow }
    }

    /// The manual clock that drives the link, if it has one.
    public var manualClock: ManualClock? {
        engine.withLock { engine in
            if case let .manual(clock, _) = engine.time { return clock }
            return nil
        }
    }

    /// The clock for the timers of hosts on this link: the link's manual clock, so that hosts
    /// and radio share one simulated time, or the continuous clock.
    public var hostClock: BluetoothClock {
        manualClock.map(BluetoothClock.manual) ?? .continuous
    }

    /// Simulated seconds per real second (1 with a manual clock, which has no rate).
    public var timeScale: Double {
        engine.withLock { engine in
            if case let .real(clock) = engine.time { return clock.timeScale }
            return 1
        }
    }

    /// Changes how fast simulated time runs, from now on (nothing with a manual clock).
    public func setTimeScale(_ scale: Double) {
        performSync { _ in }
        let rearm = engine.withLock { engine -> WakeUp? in
            guard case var .real(clock) = engine.time else { return nil }
            clock.setTimeScale(scale)
            engine.time = .real(clock)
            engine.armedDeadline = nil
            return Self.nextWakeUp(&engine)
        }
        if let rearm { _ = arm(rearm) } // a real-time wake-up, never late
    }

    /// Returns once everything the link has been given so far is processed and what it produced
    /// is handed to the hosts' receivers. With a manual clock, a test calls it after an advance
    /// to see that moment's packets. Never call it on the link's queue or from a receiver.
    public func waitUntilDelivered() {
        queue.sync {}
        let transports = attachments.withLock { $0.values.compactMap(\.transport) }
        let closed = closing.withLock { closing in
            defer { closing.removeAll() }
            return closing.compactMap(\.transport)
        }
        for transport in transports + closed { transport.waitUntilDelivered() }
    }

    // MARK: Radio

    /// Sets the path loss between two controllers, replacing the distance model for that pair
    /// (`nil` goes back to the model). 30 dB is close by; above TX power − sensitivity
    /// (90 dB by default) they no longer hear each other.
    public func setPathLoss(between first: VirtualController, and second: VirtualController, to loss: Double?) {
        performSync { simulation in simulation.pathLossOverrides[ControllerPair(first.id, second.id)] = loss }
    }

    /// The path loss between two controllers now, in dB.
    public func pathLoss(between first: VirtualController, and second: VirtualController) -> Double? {
        engine.withLock { $0.simulation.pathLoss(between: first.id, and: second.id) }
    }

    /// The RSSI `receiver` measures for `sender`'s packets now, as HCI reports it.
    public func rssi(from sender: VirtualController, at receiver: VirtualController) -> Int8 {
        engine.withLock { $0.simulation.reception(from: sender.id, to: receiver.id).reportedRSSI }
    }

    /// Whether `first` and `second` hear each other now.
    public func inRange(_ first: VirtualController, _ second: VirtualController) -> Bool {
        engine.withLock { $0.simulation.canTalk(first.id, second.id) }
    }

    /// The radio model used for distances.
    public var radio: RadioModel {
        engine.withLock { $0.simulation.radio }
    }

    /// Replaces the radio model, from now on.
    public func setRadio(_ radio: RadioModel) {
        performSync { $0.radio = radio }
    }

    // MARK: Lifetime

    /// Stops the link: every attached transport closes with an error, timers stop, and the
    /// controllers answer nothing more.
    public func shutdown() {
        performSync { simulation in
            simulation.timers.removeAll()
            for id in Array(simulation.controllers.keys) { simulation.removeController(id) }
        }
        let alarm = engine.withLock { engine -> (ManualClock, ManualClock.Alarm)? in
            engine.isShutDown = true
            guard case let .manual(clock, _) = engine.time, let alarm = engine.armedAlarm else { return nil }
            engine.armedAlarm = nil
            return (clock, alarm)
        }
        if let (clock, armed) = alarm { clock.cancel(armed) }
        let transports = attachments.withLock { attachments in
            defer { attachments.removeAll() }
            return attachments.values.compactMap(\.transport)
        }
        for transport in transports { close(transport, reason: "the virtual link was shut down") }
    }

    /// Whether ``shutdown()`` was called.
    public var isShutDown: Bool { engine.withLock { $0.isShutDown } }

    // MARK: Attaching hosts

    /// Makes `transport` the host connection of `controller`; a previous one is closed.
    func attach(_ transport: VirtualControllerTransport, to controller: ControllerID) {
        let previous = attachments.withLock { attachments in
            defer { attachments[controller] = Attachment(transport: transport) }
            return attachments[controller]?.transport
        }
        if let previous, previous !== transport { close(previous, reason: "another host attached to the virtual controller") }
    }

    func detach(_ transport: VirtualControllerTransport, from controller: ControllerID) {
        attachments.withLock { attachments in
            if attachments[controller]?.transport === transport { attachments[controller] = nil }
        }
    }

    /// A packet from the host on `transport`; ignored if that transport was replaced.
    func submit(_ packet: H4Packet, from transport: VirtualControllerTransport, to controller: ControllerID) {
        queue.async { [self] in
            let current = attachments.withLock { $0[controller]?.transport }
            guard current === transport else { return }
            step { $0.receive(packet, from: controller) }
        }
    }

    // MARK: Running the simulation

    /// Runs `body` on the link's queue and waits for it; the simulation first catches up
    /// with the clock, and what it produced is delivered afterwards. Never call it on the
    /// link's queue (the hosts' receivers run elsewhere, so they may).
    @discardableResult
    func performSync<T: Sendable>(_ body: (inout LinkSimulation) -> T) -> T {
        dispatchPrecondition(condition: .notOnQueue(queue))
        return queue.sync { step(body) }
    }

    /// Reads the simulation without advancing it.
    func read<T: Sendable>(_ body: (LinkSimulation) -> T) -> T {
        engine.withLock { body($0.simulation) }
    }

    private func step<T: Sendable>(_ body: (inout LinkSimulation) -> T) -> T {
        var (result, deliveries, wakeUp) = advance(body)
        // Armed before the deliveries: a test that moves a manual clock on as soon as its host
        // hears an event finds the link's alarm in place.
        while let next = wakeUp, let late = arm(next), let spent = spendWakeUp(token: late.token) {
            // A test moved the manual clock past the deadline while this step ran (from another
            // thread), before the alarm existed, and a clock runs an alarm scheduled in the past
            // only at its next advance, which may never come: the link catches up now, in this
            // same work item, so that ``waitUntilDelivered()`` sees what it produced.
            if let alarm = spent { late.clock.cancel(alarm) }
            let (_, more, after) = advance { _ in }
            deliveries += more
            wakeUp = after
        }
        deliver(deliveries)
        return result
    }

    /// Catches the simulation up with the clock, runs `body`, and takes what it produced and
    /// the wake-up to arm next, if any.
    private func advance<T: Sendable>(_ body: (inout LinkSimulation) -> T) -> (T, [Delivery], WakeUp?) {
        engine.withLock { engine -> (T, [Delivery], WakeUp?) in
            engine.simulation.advance(to: engine.time.simulatedNow)
            let result = body(&engine.simulation)
            let deliveries = engine.simulation.takeOutbox()
            return (result, deliveries, engine.isShutDown ? nil : Self.nextWakeUp(&engine))
        }
    }

    /// When to wake up for the earliest timer, unless a wake-up at or before it is already armed.
    private static func nextWakeUp(_ engine: inout Engine) -> WakeUp? {
        guard let next = engine.simulation.timers.nextDeadline else { return nil }
        if let armed = engine.armedDeadline, armed <= next { return nil }
        engine.armedToken &+= 1
        engine.armedDeadline = next
        switch engine.time {
        case let .real(clock):
            return .real(clock.realInstant(for: next), token: engine.armedToken)
        case let .manual(clock, origin):
            defer { engine.armedAlarm = nil }
            return .manual(clock, at: origin + next, token: engine.armedToken, replacing: engine.armedAlarm)
        }
    }

    /// Arms `wakeUp`. Returns the manual clock and the wake-up's token when that clock has
    /// passed its deadline already (see ``step(_:)``), `nil` otherwise.
    private func arm(_ wakeUp: WakeUp) -> (clock: ManualClock, token: UInt64)? {
        switch wakeUp {
        case let .real(instant, token):
            let delay = max(.zero, instant - ContinuousClock.now)
            let (seconds, attoseconds) = delay.components
            let nanoseconds = Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            queue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                self?.wakeUp(token: token)
            }
            return nil
        case let .manual(clock, deadline, token, replaced):
            if let replaced { clock.cancel(replaced) }
            // The alarm runs inside the test's advance: the link catches up before it returns.
            let alarm = clock.schedule(at: deadline) { [weak self] in
                guard let self else { return }
                self.queue.sync { self.wakeUp(token: token) }
            }
            engine.withLock { engine in
                if engine.armedToken == token { engine.armedAlarm = alarm } else { clock.cancel(alarm) }
            }
            // Checked after the alarm exists: an advance either takes the alarm or has moved
            // the clock past the deadline by now (the clock does both under one lock).
            return clock.now >= deadline ? (clock, token) : nil
        }
    }

    private func wakeUp(token: UInt64) {
        guard spendWakeUp(token: token) != nil else { return }
        step { _ in }
    }

    /// Ends the armed wake-up `token`, if it is still the current one: `nil` when it is not,
    /// else its manual clock's alarm (`.some(nil)` without one), which the caller cancels when
    /// it has not run.
    private func spendWakeUp(token: UInt64) -> ManualClock.Alarm?? {
        engine.withLock { engine -> ManualClock.Alarm?? in
            guard engine.armedToken == token else { return nil }
            defer {
                engine.armedDeadline = nil
                engine.armedAlarm = nil
            }
            return .some(engine.armedAlarm)
        }
    }

    private func deliver(_ deliveries: [Delivery]) {
        guard !deliveries.isEmpty else { return }
        let attached = attachments.withLock { $0 }
        // One batch per controller and step, in the order the link produced them.
        var batches: [ControllerID: [H4Packet]] = [:]
        var order: [ControllerID] = []
        for delivery in deliveries {
            if batches[delivery.controller] == nil { order.append(delivery.controller) }
            batches[delivery.controller, default: []].append(delivery.packet)
        }
        for controller in order {
            attached[controller]?.transport?.deliver(batches[controller] ?? [])
        }
    }
}
