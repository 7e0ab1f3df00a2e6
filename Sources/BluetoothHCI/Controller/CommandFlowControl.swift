import BluetoothCore
import DequeModule

/// The host side of HCI command flow control (Core 6.0, Vol 4, Part E, 4.4): at most
/// Num_HCI_Command_Packets commands may be outstanding, and each Command Complete or Command
/// Status event sets that number anew. A plain state machine: no I/O, no clock.
struct CommandFlowControl<Ticket: Sendable>: Sendable {
    struct Command: Sendable {
        var id: UInt64
        var opcode: HCIOpcode
        var packet: [UInt8]
        var ticket: Ticket
    }

    /// How many commands the controller accepts now. The controller may announce 0.
    private(set) var credits = 1
    private var waiting: Deque<Command> = []
    private var inFlight: [Command] = []

    var waitingCount: Int { waiting.count }
    var inFlightCount: Int { inFlight.count }

    /// Queues a command; returns the commands that may be written now, in order.
    mutating func submit(_ command: Command) -> [Command] {
        waiting.append(command)
        return release()
    }

    /// A Command Complete or Command Status arrived. Returns the command it answers (the
    /// oldest one in flight with that opcode, if any) and the commands that may be written now.
    mutating func acknowledge(opcode: HCIOpcode, credits newCredits: UInt8) -> (answered: Command?, send: [Command]) {
        var answered: Command?
        if opcode != .noOperation, let index = inFlight.firstIndex(where: { $0.opcode == opcode }) {
            answered = inFlight.remove(at: index)
        }
        credits = Int(newCredits)
        return (answered, release())
    }

    /// Gives up on a command (timeout or cancellation). A command still waiting is simply
    /// dropped; one in flight also gives back a credit, since the controller will never
    /// acknowledge it and otherwise the host would stall.
    mutating func abandon(id: UInt64) -> (abandoned: Command?, send: [Command]) {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            return (waiting.remove(at: index), [])
        }
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return (nil, []) }
        let command = inFlight.remove(at: index)
        credits = max(credits, 1)
        return (command, release())
    }

    /// Removes every command, for when the transport closes.
    mutating func removeAll() -> [Command] {
        let all = Array(inFlight) + Array(waiting)
        inFlight.removeAll()
        waiting.removeAll()
        return all
    }

    private mutating func release() -> [Command] {
        var ready: [Command] = []
        while credits > 0, let next = waiting.popFirst() {
            credits -= 1
            inFlight.append(next)
            ready.append(next)
        }
        return ready
    }
}
