/// The client side of the SASL handshake that opens every D-Bus connection (D-Bus
/// Specification, "Authentication Protocol"), as a state machine with no I/O: the EXTERNAL
/// mechanism with the process's uid (the server checks it against the socket's credentials),
/// then optionally NEGOTIATE_UNIX_FD, then BEGIN.
///
///     C: \0AUTH EXTERNAL 31303030      (the uid, 1000, as hex of its decimal digits)
///     S: OK 1234deadbeef…              (the server's GUID)
///     C: NEGOTIATE_UNIX_FD
///     S: AGREE_UNIX_FD                 (or ERROR: no descriptor passing)
///     C: BEGIN                         (messages follow)
///
/// The server's lines are bounded in length and number, so a peer that never stops talking
/// ends the handshake with an error.
struct DBusAuthentication {
    /// What the handshake agreed.
    struct Outcome: Equatable {
        /// The server's GUID (32 hex digits).
        var guid: String
        /// Whether Unix file descriptors may be passed.
        var unixFileDescriptors: Bool
    }

    /// What to do after some bytes arrived.
    struct Step: Equatable {
        /// Bytes to send now.
        var send: [UInt8] = []
        /// Set when the handshake is done (after `send` goes out, messages follow).
        var outcome: Outcome?
        /// Bytes that came after the server's last line: the start of the message stream.
        var leftover: [UInt8] = []
    }

    static let maximumLineLength = 16 * 1024
    static let maximumLines = 8

    private enum State {
        case waitingForOK
        case waitingForFileDescriptorAgreement(guid: String)
        case done
    }

    private let negotiateUnixFileDescriptors: Bool
    private var state = State.waitingForOK
    private var buffer: [UInt8] = []
    private var lines = 0
    /// The first bytes to send: a nul byte (where credentials could travel), then AUTH.
    let greeting: [UInt8]

    init(uid: UInt32, negotiateUnixFileDescriptors: Bool) {
        self.negotiateUnixFileDescriptors = negotiateUnixFileDescriptors
        let identity = String(uid).utf8.map { byte in
            let digits = String(byte, radix: 16)
            return byte < 0x10 ? "0" + digits : digits
        }.joined()
        greeting = [0] + Array("AUTH EXTERNAL \(identity)\r\n".utf8)
    }

    /// Takes bytes from the server; returns what to send and, once done, the outcome.
    mutating func receive(_ bytes: some Collection<UInt8>) throws(DBusError) -> Step {
        var step = Step()
        buffer.append(contentsOf: bytes)
        while step.outcome == nil, let line = try nextLine() {
            try handle(line, into: &step)
        }
        if step.outcome != nil {
            step.leftover = buffer
            buffer = []
        } else if buffer.count > Self.maximumLineLength {
            throw .authenticationFailed("the server sent a line longer than \(Self.maximumLineLength) bytes")
        }
        return step
    }

    private mutating func nextLine() throws(DBusError) -> String? {
        guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
        guard newline <= Self.maximumLineLength else {
            throw .authenticationFailed("the server sent a line longer than \(Self.maximumLineLength) bytes")
        }
        guard newline > 0, buffer[newline - 1] == UInt8(ascii: "\r") else {
            throw .authenticationFailed("the server's line does not end with CR LF")
        }
        let line = buffer[..<(newline - 1)]
        buffer.removeSubrange(...newline)
        lines += 1
        guard lines <= Self.maximumLines else { throw .authenticationFailed("the server sent more than \(Self.maximumLines) lines") }
        guard line.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .authenticationFailed("the server sent a line that is not printable ASCII")
        }
        return String(decoding: line, as: UTF8.self)
    }

    private mutating func handle(_ line: String, into step: inout Step) throws(DBusError) {
        let command = line.prefix { $0 != " " }
        let argument = line.dropFirst(command.count).drop { $0 == " " }
        switch (state, command) {
        case (.waitingForOK, "OK"):
            let guid = String(argument)
            guard guid.utf8.count == 32, guid.utf8.allSatisfy({ $0.isHexDigit }) else {
                throw .authenticationFailed("the server's GUID \"\(guid)\" is not 32 hex digits")
            }
            if negotiateUnixFileDescriptors {
                state = .waitingForFileDescriptorAgreement(guid: guid)
                step.send += Array("NEGOTIATE_UNIX_FD\r\n".utf8)
            } else {
                finish(guid: guid, unixFileDescriptors: false, into: &step)
            }
        case (.waitingForOK, "REJECTED"):
            let offered = argument.isEmpty ? "none" : String(argument)
            throw .authenticationFailed("the server refused EXTERNAL authentication for this user (it offers: \(offered)); "
                + "its policy may not allow this uid, or the socket does not pass credentials")
        case (.waitingForOK, "ERROR"), (.waitingForOK, "DATA"):
            throw .authenticationFailed("the server answered AUTH EXTERNAL with \"\(line)\"")
        case let (.waitingForFileDescriptorAgreement(guid), "AGREE_UNIX_FD"):
            finish(guid: guid, unixFileDescriptors: true, into: &step)
        case let (.waitingForFileDescriptorAgreement(guid), "ERROR"):
            finish(guid: guid, unixFileDescriptors: false, into: &step)
        default:
            throw .authenticationFailed("unexpected line from the server: \"\(line.prefix(80))\"")
        }
    }

    private mutating func finish(guid: String, unixFileDescriptors: Bool, into step: inout Step) {
        state = .done
        step.send += Array("BEGIN\r\n".utf8)
        step.outcome = Outcome(guid: guid, unixFileDescriptors: unixFileDescriptors)
    }
}

extension UInt8 {
    var isHexDigit: Bool {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): return true
        default: return false
        }
    }
}
