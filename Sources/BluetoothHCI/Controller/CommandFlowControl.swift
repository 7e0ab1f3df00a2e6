import BluetoothCore
import DequeModule

/// The host side of HCI command flow control (Core 6.0, Vol 4, Part E, 4.4): at most
/// Num_HCI_Command_Packets commands may be outstanding, and each Command Complete or Command
/// Status event sets that number anew. A plain state machine: no I/O; the time is passed in.
///
/// An answer names only the opcode it answers, so the commands of one opcode are answered in
/// the order they were sent, and an answer whose return parameters start with a connection
/// handle goes to the command for that connection. A command given up while in flight (timed
/// out, cancelled) stays behind as a ghost for ``ghostLifetime``: its late answer is absorbed
/// there instead of being taken for a later command's (a late Read RSSI of one link must not
/// answer the next Read RSSI of another).
struct CommandFlowControl<Ticket: Sendable>: Sendable {
    struct Command: Sendable {
        var id: UInt64
        var opcode: HCIOpcode
        var packet: [UInt8]
        var ticket: Ticket
        /// The connection the command acts on, when its answer names it too.
        var connectionHandle: UInt16? = nil
        /// Its place in the order commands were written (set when it is).
        private(set) var sequence: UInt64 = 0

        init(id: UInt64, opcode: HCIOpcode, packet: [UInt8], ticket: Ticket, connectionHandle: UInt16? = nil) {
            self.id = id
            self.opcode = opcode
            self.packet = packet
            self.ticket = ticket
            self.connectionHandle = connectionHandle
        }

        fileprivate mutating func written(as sequence: UInt64) {
            self.sequence = sequence
        }
    }

    /// A command given up in flight, kept to absorb its late answer.
    private struct Ghost: Sendable {
        var opcode: HCIOpcode
        var connectionHandle: UInt16?
        var sequence: UInt64
        var expires: BluetoothClock.Instant
    }

    /// A command refused because ``waitingLimit`` commands wait already.
    struct QueueFull: Error, Equatable {}

    /// How long a ghost waits for its late answer.
    let ghostLifetime: Duration
    /// The most commands waiting for credits; one more is refused.
    let waitingLimit: Int
    /// The most ghosts kept (the oldest go first).
    static var maximumGhosts: Int { 32 }

    /// How many commands the controller accepts now. The controller may announce 0.
    private(set) var credits = 1
    private var waiting: Deque<Command> = []
    private var inFlight: [Command] = []
    private var ghosts: [Ghost] = []
    private var nextSequence: UInt64 = 0

    init(ghostLifetime: Duration = .seconds(5), waitingLimit: Int = 256) {
        self.ghostLifetime = ghostLifetime
        self.waitingLimit = max(1, waitingLimit)
    }

    var waitingCount: Int { waiting.count }
    var inFlightCount: Int { inFlight.count }
    var ghostCount: Int { ghosts.count }

    /// Queues a command; returns the commands that may be written now, in order. Throws
    /// ``QueueFull`` (and queues nothing) when ``waitingLimit`` commands wait already.
    mutating func submit(_ command: Command) throws(QueueFull) -> [Command] {
        guard waiting.count < waitingLimit else { throw QueueFull() }
        waiting.append(command)
        return release()
    }

    /// What an answer did.
    struct Acknowledgement {
        /// The command it answers, if one in flight does.
        var answered: Command?
        /// It answered a command given up earlier, and is dropped.
        var wasLate = false
        /// The commands that may be written now.
        var send: [Command] = []
    }

    /// A Command Complete or Command Status arrived for `opcode`; `connectionHandle` is the
    /// handle its return parameters start with, if they do. Returns what it answers and the
    /// commands that may be written now.
    mutating func acknowledge(opcode: HCIOpcode, connectionHandle: UInt16? = nil, credits newCredits: UInt8,
                              at now: BluetoothClock.Instant) -> Acknowledgement {
        ghosts.removeAll { $0.expires <= now }
        var acknowledgement = Acknowledgement()
        if opcode != .noOperation {
            func matches(_ candidateHandle: UInt16?) -> Bool {
                guard let candidateHandle, let connectionHandle else { return true }
                return candidateHandle == connectionHandle
            }
            let live = inFlight.indices.filter { inFlight[$0].opcode == opcode && matches(inFlight[$0].connectionHandle) }
                .min { inFlight[$0].sequence < inFlight[$1].sequence }
            let ghost = ghosts.indices.filter { ghosts[$0].opcode == opcode && matches(ghosts[$0].connectionHandle) }
                .min { ghosts[$0].sequence < ghosts[$1].sequence }
            if let ghost, live.map({ ghosts[ghost].sequence < inFlight[$0].sequence }) ?? true {
                ghosts.remove(at: ghost)
                acknowledgement.wasLate = true
            } else if let live {
                acknowledgement.answered = inFlight.remove(at: live)
            }
        }
        credits = Int(newCredits)
        acknowledgement.send = release()
        return acknowledgement
    }

    /// Gives up on a command (timeout or cancellation). A command still waiting is simply
    /// dropped; one in flight becomes a ghost and gives back a credit, since the controller may
    /// never acknowledge it and otherwise the host would stall.
    mutating func abandon(id: UInt64, at now: BluetoothClock.Instant) -> (abandoned: Command?, send: [Command]) {
        if let index = waiting.firstIndex(where: { $0.id == id }) {
            return (waiting.remove(at: index), [])
        }
        guard let index = inFlight.firstIndex(where: { $0.id == id }) else { return (nil, []) }
        let command = inFlight.remove(at: index)
        ghosts.append(Ghost(opcode: command.opcode, connectionHandle: command.connectionHandle, sequence: command.sequence,
                            expires: now + ghostLifetime))
        if ghosts.count > Self.maximumGhosts { ghosts.removeFirst(ghosts.count - Self.maximumGhosts) }
        credits = max(credits, 1)
        return (command, release())
    }

    /// Removes every command, for when the transport closes.
    mutating func removeAll() -> [Command] {
        let all = Array(inFlight) + Array(waiting)
        inFlight.removeAll()
        waiting.removeAll()
        ghosts.removeAll()
        return all
    }

    private mutating func release() -> [Command] {
        var ready: [Command] = []
        while credits > 0, var next = waiting.popFirst() {
            credits -= 1
            nextSequence &+= 1
            next.written(as: nextSequence)
            inFlight.append(next)
            ready.append(next)
        }
        return ready
    }
}
