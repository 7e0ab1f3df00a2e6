import BluetoothCore

/// The read requests (Core 6.0, Vol 3, Part F, 3.4.4.3 to 3.4.4.12).
extension GATTServer {
    /// Read (Vol 3, Part F, 3.4.4.3): the value, cut to ATT_MTU − 1 octets.
    func read(_ request: ATTReadRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readRequest
        guard let attribute = database.attribute(at: request.handle) else { return Self.error(opcode, request.handle, .invalidHandle) }
        switch await readValue(of: attribute, context) {
        case let .error(code): return Self.error(opcode, request.handle, code)
        case let .value(value): return .readResponse(ATTReadResponse(value: Array(value.prefix(context.mtu - 1))))
        }
    }

    /// Read Blob (Vol 3, Part F, 3.4.4.5): the value from an offset, cut to ATT_MTU − 1
    /// octets. An offset past the end is Invalid Offset; a value that a Read Response carries
    /// whole is Attribute Not Long when read past its start.
    func readBlob(_ request: ATTReadBlobRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readBlobRequest
        guard let attribute = database.attribute(at: request.handle) else { return Self.error(opcode, request.handle, .invalidHandle) }
        let offset = Int(request.offset)
        switch await readValue(of: attribute, offset: offset, context) {
        case let .error(code):
            return Self.error(opcode, request.handle, code)
        case let .value(value):
            guard offset <= value.count else { return Self.error(opcode, request.handle, .invalidOffset) }
            if offset > 0, value.count <= context.mtu - 1 { return Self.error(opcode, request.handle, .attributeNotLong) }
            let end = min(value.count, offset + context.mtu - 1)
            return .readBlobResponse(ATTReadBlobResponse(partValue: Array(value[offset..<end])))
        }
    }

    /// Read Multiple (Vol 3, Part F, 3.4.4.7): the values concatenated, cut to ATT_MTU − 1
    /// octets. The first handle that is invalid or unreadable is the answer.
    func readMultiple(_ request: ATTReadMultipleRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readMultipleRequest
        // Every handle is read (any refusal answers the request), but only what fits in the
        // answer is kept: a request that lists long values many times costs no more memory.
        var values: [UInt8] = []
        let room = context.mtu - 1
        for handle in request.handles {
            switch await readOne(handle, opcode: opcode, context) {
            case let .failure(error): return error.pdu
            case let .success(value): values += value.prefix(max(0, room - values.count))
            }
        }
        return .readMultipleResponse(ATTReadMultipleResponse(setOfValues: values))
    }

    /// Read Multiple Variable (Vol 3, Part F, 3.4.4.11): a length and a value per handle.
    /// The list is cut at ATT_MTU − 1 octets, possibly inside a value but never inside a
    /// length, which always gives the full value's length (Vol 3, Part F, 3.4.4.12).
    func readMultipleVariable(_ request: ATTReadMultipleVariableRequest, _ context: RequestContext) async -> ATTPDU {
        let opcode = ATTOpcode.readMultipleVariableRequest
        // As for Read Multiple: every handle is read, only what fits is kept.
        var room = context.mtu - 1
        var tuples: [ATTReadMultipleVariableResponse.LengthValue] = []
        for handle in request.handles {
            switch await readOne(handle, opcode: opcode, context) {
            case let .failure(error): return error.pdu
            case let .success(value):
                guard room >= 2 else { continue }
                let included = Array(value.prefix(room - 2))
                tuples.append(.init(valueLength: UInt16(clamping: value.count), value: included))
                room -= 2 + included.count
            }
        }
        return .readMultipleVariableResponse(ATTReadMultipleVariableResponse(values: tuples))
    }

    /// An Error Response as a Swift error, to leave a loop with.
    struct RequestFailure: Error {
        let pdu: ATTPDU
    }

    private func readOne(_ handle: UInt16, opcode: ATTOpcode, _ context: RequestContext) async -> Result<[UInt8], RequestFailure> {
        guard let attribute = database.attribute(at: handle) else {
            return .failure(RequestFailure(pdu: Self.error(opcode, handle, .invalidHandle)))
        }
        switch await readValue(of: attribute, context) {
        case let .error(code): return .failure(RequestFailure(pdu: Self.error(opcode, handle, code)))
        case let .value(value): return .success(value)
        }
    }
}
