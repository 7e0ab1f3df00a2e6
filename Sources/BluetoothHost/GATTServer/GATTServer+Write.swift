import BluetoothCore

/// Write Request and Write Command (Core 6.0, Vol 3, Part F, 3.4.5).
extension GATTServer {
    /// Write Request (Vol 3, Part F, 3.4.5.1): a Write Response once the value is stored, or
    /// the error of the permission check, the length check or the application's handler.
    func write(_ request: ATTWriteRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.writeRequest
        guard let attribute = database.attribute(at: request.handle) else { return Self.error(opcode, request.handle, .invalidHandle) }
        if let code = await writeValue(request.value, to: attribute, kind: .request, context) {
            return Self.error(opcode, request.handle, code)
        }
        return .writeResponse(ATTWriteResponse())
    }

    /// Write Command (Vol 3, Part F, 3.4.5.3): like a Write Request, but nothing is ever
    /// answered, not even an error.
    func write(_ command: ATTWriteCommand, _ context: RequestContext) async {
        guard let attribute = database.attribute(at: command.handle) else {
            logger.debug("Write Command to unknown handle \(Hex.format(command.handle, digits: 4)) ignored")
            return
        }
        if let code = await writeValue(command.value, to: attribute, kind: .command, context) {
            logger.debug("Write Command to \(Hex.format(command.handle, digits: 4)) not done: \(code)")
        }
    }
}
