import BluetoothCore
import BluetoothHCI
import BluetoothTransport
import Logging

/// A packet for the host of one controller.
struct Delivery: Sendable {
    var controller: ControllerID
    var packet: H4Packet
}

/// The whole radio world of one ``VirtualLink`` as a value: its controllers, their
/// connections and the timers that drive advertising and connection events. Every input (a
/// packet from a host, a timer, a test's fault) is a mutating call at the current simulated
/// time; every output is a packet for a host, collected in ``outbox``. It does no I/O and
/// reads no clock, so it runs the same under any scheduler.
struct LinkSimulation: Sendable {
    /// Simulated time since the link started.
    private(set) var now: Duration = .zero
    var controllers: [ControllerID: ControllerState] = [:]
    var connections: [LinkConnectionID: LinkConnection] = [:]
    var timers = TimerQueue<LinkTimer>()
    var random: SeededRandomNumberGenerator
    var radio: RadioModel
    /// Path losses set by tests, per unordered pair of controllers.
    var pathLossOverrides: [ControllerPair: Double] = [:]
    private(set) var outbox: [Delivery] = []
    private var nextControllerID = 0
    private var nextConnectionID = 0
    let logger: Logger

    init(radio: RadioModel, random: SeededRandomNumberGenerator, logger: Logger) {
        self.radio = radio
        self.random = random
        self.logger = logger
    }

    // MARK: Time

    /// Fires every timer due up to `time`, each at its own deadline, then sets the clock.
    mutating func advance(to time: Duration) {
        while let due = timers.popDue(at: time) {
            now = max(now, due.deadline)
            fire(due.payload)
        }
        now = max(now, time)
    }

    private mutating func fire(_ timer: LinkTimer) {
        switch timer {
        case let .advertisingEvent(controller): runAdvertisingEvent(controller)
        case let .advertisingSetEvent(controller, handle): runAdvertisingSetEvent(controller, handle: handle)
        case let .connectionEvent(connection): runConnectionEvent(connection)
        case let .scanTimeout(controller): scanDidTimeOut(controller)
        case let .establishmentFailure(controller): initiationDidFail(controller)
        }
    }

    /// Hands over what the last steps produced.
    mutating func takeOutbox() -> [Delivery] {
        defer { outbox.removeAll() }
        return outbox
    }

    // MARK: Controllers

    mutating func addController(name: String, address: BluetoothAddress, configuration: VirtualController.Configuration,
                                position: VirtualPosition) -> ControllerID {
        nextControllerID += 1
        let id = ControllerID(value: nextControllerID)
        controllers[id] = ControllerState(id: id, name: name, publicAddress: address, configuration: configuration, position: position)
        return id
    }

    /// Takes a controller off the link: its connections die (peers time out).
    mutating func removeController(_ id: ControllerID) {
        silence(id)
        controllers[id] = nil
    }

    /// HCI Reset, or a reset from outside: advertising, scanning and initiating stop and the
    /// connections vanish without Disconnection Complete on this side (Core 6.0, Vol 4,
    /// Part E, 7.3.2); the peers lose them by supervision timeout.
    mutating func reset(_ id: ControllerID) {
        guard let state = controllers[id] else { return }
        silence(id)
        controllers[id] = state.afterReset()
    }

    /// Stops everything `id` does on the air, leaving its other state alone.
    private mutating func silence(_ id: ControllerID) {
        guard var state = controllers[id] else { return }
        timers.cancel(state.advertising.timer)
        timers.cancel(state.scanning.timeoutTimer)
        timers.cancel(state.initiating?.failureTimer)
        state.advertising.isEnabled = false
        state.advertising.timer = nil
        state.scanning.isEnabled = false
        state.scanning.timeoutTimer = nil
        state.initiating = nil
        for (handle, connectionID) in state.connections {
            state.buffers.connectionClosed(handle: handle)
            guard var connection = connections[connectionID], let role = connection.role(of: id) else { continue }
            connection.updateEnd(role) { $0.isAlive = false }
            connection.updateOutgoing(from: role) { $0.removeAll() }
            if connection.central.isAlive || connection.peripheral.isAlive {
                connections[connectionID] = connection
            } else {
                timers.cancel(connection.timer)
                connections[connectionID] = nil
            }
        }
        state.connections.removeAll()
        controllers[id] = state
    }

    mutating func makeConnectionID() -> LinkConnectionID {
        nextConnectionID += 1
        return LinkConnectionID(value: nextConnectionID)
    }

    // MARK: Radio

    /// The path loss between two controllers, in dB.
    func pathLoss(between a: ControllerID, and b: ControllerID) -> Double? {
        if let override = pathLossOverrides[ControllerPair(a, b)] { return override }
        guard let first = controllers[a], let second = controllers[b] else { return nil }
        return radio.pathLoss(distance: first.position.distance(to: second.position))
    }

    /// What `receiver` hears of `sender`'s transmissions.
    func reception(from sender: ControllerID, to receiver: ControllerID) -> RadioReception {
        guard let transmitter = controllers[sender], let listener = controllers[receiver],
              let loss = pathLoss(between: sender, and: receiver) else {
            return RadioReception(rssi: -Double.infinity, isReceived: false)
        }
        let rssi = Double(transmitter.configuration.txPower) - loss
        var received = rssi >= Double(listener.configuration.sensitivity)
        if pathLossOverrides[ControllerPair(sender, receiver)] == nil, let range = radio.maximumRange,
           transmitter.position.distance(to: listener.position) > range {
            received = false
        }
        return RadioReception(rssi: rssi, isReceived: received)
    }

    /// Both directions get through.
    func canTalk(_ a: ControllerID, _ b: ControllerID) -> Bool {
        reception(from: a, to: b).isReceived && reception(from: b, to: a).isReceived
    }

    // MARK: Host input

    /// A packet from the host of `controller`.
    mutating func receive(_ packet: H4Packet, from controller: ControllerID) {
        guard controllers[controller] != nil else { return }
        switch packet.indicator {
        case .command: handleCommand(Array(packet.bytes), from: controller)
        case .acl: receiveACL(Array(packet.bytes), from: controller)
        default: logger.debug("controller \(controller): ignoring \(packet.indicator) packet from the host")
        }
    }

    // MARK: Output

    /// Sends an event to a controller's host, unless its event masks filter it out.
    mutating func emit(_ event: HCIEvent, to controller: ControllerID) {
        let bytes = event.encode()
        guard let state = controllers[controller], state.allowsEvent(bytes) else { return }
        outbox.append(Delivery(controller: controller, packet: H4Packet(.event, bytes)))
    }

    mutating func emit(_ event: HCILEMetaEvent, to controller: ControllerID) {
        emit(.le(event), to: controller)
    }

    /// Sends received data to a controller's host: one ACL packet per LL PDU.
    mutating func deliverACL(_ pdu: LinkDataQueue.PDU, handle: UInt16, to controller: ControllerID) {
        let packet = ACLDataPacket(connectionHandle: handle, packetBoundary: pdu.startsPDU ? .firstFlushable : .continuing, data: pdu.data)
        outbox.append(Delivery(controller: controller, packet: H4Packet(.acl, packet.encode())))
    }

    /// Command Complete with `status` and return parameters after it (Num_HCI_Command_Packets 1).
    mutating func complete(_ controller: ControllerID, _ opcode: HCIOpcode, _ status: HCIStatus, _ parameters: [UInt8] = []) {
        emit(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: 1, opcode: opcode, returnParameters: [status.rawValue] + parameters)), to: controller)
    }

    /// A successful Command Complete with typed return parameters.
    mutating func complete<Parameters: HCIReturnParameters>(_ controller: ControllerID, _ opcode: HCIOpcode, returning parameters: Parameters) {
        emit(.commandComplete(CommandCompleteEvent(numberOfHCICommandPackets: 1, opcode: opcode, returnParameters: parameters.encodeWithSuccessStatus())), to: controller)
    }

    mutating func status(_ controller: ControllerID, _ opcode: HCIOpcode, _ status: HCIStatus) {
        emit(.commandStatus(CommandStatusEvent(status: status, numberOfHCICommandPackets: 1, opcode: opcode)), to: controller)
    }
}

/// An unordered pair of controllers.
struct ControllerPair: Hashable, Sendable {
    let first: ControllerID
    let second: ControllerID

    init(_ a: ControllerID, _ b: ControllerID) {
        first = min(a, b)
        second = max(a, b)
    }
}
