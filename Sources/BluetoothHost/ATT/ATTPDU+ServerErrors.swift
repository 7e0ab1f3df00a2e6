extension ATTPDU {
    /// What a server sends back for bytes that ``decode(_:)`` rejected
    /// (Core 6.0, Vol 3, Part F, 3.3):
    ///
    /// - a command it does not support (Command Flag set), or a malformed command: nothing,
    ///   the command is ignored (`nil`);
    /// - a request it does not support (unknown opcode, Command Flag clear): Request Not
    ///   Supported (0x06), handle 0x0000;
    /// - an invalid request, e.g. of the wrong length: Invalid PDU (0x04), handle 0x0000;
    /// - a malformed response, notification, indication or confirmation: `nil`; these are not
    ///   answered with an Error Response (only requests are, Vol 3, Part F, 3.4.1.1).
    public static func serverErrorResponse(toUndecodable bytes: [UInt8]) -> ATTErrorResponse? {
        guard let first = bytes.first else { return nil }
        let opcode = ATTOpcode(rawValue: first)
        if opcode.isCommand { return nil }
        guard opcode.isKnown else {
            return ATTErrorResponse(requestOpcode: opcode, handle: 0x0000, code: .requestNotSupported)
        }
        guard opcode.kind == .request else { return nil }
        return ATTErrorResponse(requestOpcode: opcode, handle: 0x0000, code: .invalidPDU)
    }
}
