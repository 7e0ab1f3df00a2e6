import BluetoothHCI
import BluetoothVirtual

/// The faults of a run, injected through the virtual controllers' fault injection.
enum SoakFault: String, CaseIterable, Sendable {
    /// A connection drops now, as if the radio link broke: both hosts get Disconnection
    /// Complete (Connection Timeout).
    case linkDrop = "link drop"
    /// ACL packets are not acknowledged a few times and retransmitted in later connection
    /// events: late, in order, none lost (Core 6.0, Vol 6, Part B, 4.5.9).
    case aclLoss = "ACL loss (retransmitted)"
    /// ACL packets, and everything behind them on the connection, wait up to 300 ms.
    case aclDelay = "ACL delay"
    /// A central's controller reports a Hardware Error and resets; its host is told of its
    /// connections' end.
    case centralHardwareError = "hardware error (central)"
    /// The same on a peripheral's controller (its app then advertises again).
    case peripheralHardwareError = "hardware error (peripheral)"
    /// A central's controller resets and its transport closes, as a USB adapter that
    /// re-enumerates; the app starts Bluejay again on the new transport.
    case centralControllerReset = "controller reset (central; transport reopened)"
    /// A peripheral's controller resets without a word, and the device reboots: its centrals
    /// find out by supervision timeout.
    case peripheralReboot = "controller reset (peripheral reboots)"

    /// How often each fault is picked (relative weights).
    static let mix: [(SoakFault, Int)] = [
        (.linkDrop, 25), (.aclLoss, 25), (.aclDelay, 20), (.centralHardwareError, 5), (.peripheralHardwareError, 5),
        (.centralControllerReset, 4), (.peripheralReboot, 4),
    ]
}

/// Injects a random fault every ``SoakSettings/faultInterval`` until the load ends.
///
/// Packets are never made to vanish (``ACLFault/drop``): no real link layer loses a packet
/// without the link failing, and a notification lost that way on a link that stays up
/// would be the fault's doing, not the stack's.
struct FaultInjector: Sendable {
    let centrals: [SoakCentral]
    let peripherals: [SoakPeripheral]
    let context: SoakContext
    let seed: UInt64

    func run(until deadline: ContinuousClock.Instant) async {
        var random = SoakGenerator.derived(from: seed, stream: 0xFA17)
        var reboots: [Task<Void, Never>] = []
        while ContinuousClock.now < deadline, !Task.isCancelled {
            do {
                try await Task.sleep(for: random.milliseconds(SoakSettings.faultInterval))
            } catch {
                break
            }
            guard ContinuousClock.now < deadline, let fault = random.weighted(SoakFault.mix) else { break }
            if let reboot = inject(fault, random: &random) { reboots.append(reboot) }
        }
        for reboot in reboots { await reboot.value }
    }

    /// Applies `fault` to a random target; returns the task of a reboot. A fault that has
    /// no target now (no connection to drop) is not counted.
    private func inject(_ fault: SoakFault, random: inout SoakGenerator) -> Task<Void, Never>? {
        switch fault {
        case .linkDrop, .aclLoss, .aclDelay:
            // Every connection has a central end on a central of the run.
            let connections = centrals.flatMap { central in central.controller.connectionHandles.map { (central, $0) } }
            guard let (central, handle) = connections.randomElement(using: &random) else { return nil }
            let controller = central.controller
            let applied: Bool
            switch fault {
            case .linkDrop:
                context.audit.linkBroke(central: central.index, peripheral: nil, at: .now, reason: fault.rawValue)
                applied = controller.dropConnection(handle: handle)
            case .aclLoss:
                applied = controller.injectACLFault(.lose(attempts: Int.random(in: 1...6, using: &random)), count: Int.random(in: 1...20, using: &random),
                                                    connectionHandle: handle, direction: Bool.random(using: &random) ? .outgoing : .incoming)
            default:
                let delay = random.milliseconds(10...300)
                let count = Int.random(in: 1...5, using: &random)
                // Each delayed packet holds up those behind it: at most count × delay (link time, which runs faster than this).
                context.audit.delayed(central: central.index, from: .now, to: .now + delay * count)
                applied = controller.injectACLFault(.delay(delay), count: count,
                                                    connectionHandle: handle, direction: Bool.random(using: &random) ? .outgoing : .incoming)
            }
            if applied { context.statistics.injected(fault.rawValue) }
        case .centralHardwareError:
            guard let central = centrals.randomElement(using: &random) else { return nil }
            context.audit.linkBroke(central: central.index, peripheral: nil, at: .now, silent: true, reason: fault.rawValue)
            central.controller.simulateHardwareError()
            context.statistics.injected(fault.rawValue)
        case .peripheralHardwareError:
            guard let peripheral = peripherals.randomElement(using: &random), let controller = peripheral.controller else { return nil }
            context.audit.linkBroke(central: nil, peripheral: peripheral.index, at: .now, silent: true, reason: fault.rawValue)
            controller.simulateHardwareError()
            context.statistics.injected(fault.rawValue)
        case .centralControllerReset:
            guard let central = centrals.randomElement(using: &random) else { return nil }
            context.audit.linkBroke(central: central.index, peripheral: nil, at: .now, silent: true, reason: fault.rawValue)
            central.controllerDidReset()
            context.statistics.injected(fault.rawValue)
        case .peripheralReboot:
            guard let peripheral = peripherals.randomElement(using: &random), peripheral.controller != nil else { return nil }
            let pause = random.milliseconds(SoakSettings.rebootPause)
            context.audit.linkBroke(central: nil, peripheral: peripheral.index, at: .now, silent: true, reason: fault.rawValue)
            context.statistics.injected(fault.rawValue)
            let statistics = context.statistics
            return context.tasks.spawn("\(peripheral.name) reboot") {
                do {
                    try await peripheral.reboot(pause: pause)
                } catch {
                    statistics.peripheralError("reboot: \(SoakPeripheral.errorType(error))")
                }
            }
        }
        return nil
    }
}
