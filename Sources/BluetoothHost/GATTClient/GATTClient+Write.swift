import BluetoothCore

extension GATTClient {
    /// Writes a characteristic's value and waits for the server's acknowledgement: a Write
    /// Request when the value fits in one PDU (MTU - 3), else a long write with prepared
    /// writes (Core 6.0, Vol 3, Part G, 4.9.3 and 4.9.4).
    public func write(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        try await writeValue(value, handle: characteristic.valueHandle)
    }

    /// Writes a descriptor's value (Core 6.0, Vol 3, Part G, 4.12.3 and 4.12.4).
    public func write(_ value: [UInt8], to descriptor: GATTDescriptor) async throws {
        try await writeValue(value, handle: descriptor.handle)
    }

    /// Writes an attribute value with acknowledgement, long or not.
    public func writeValue(_ value: [UInt8], handle: UInt16) async throws {
        guard value.count <= Self.maximumValueLength else {
            throw HostError.invalidArgument("a value written in parts is at most \(Self.maximumValueLength) bytes, not \(value.count)")
        }
        if value.count <= Int(mtu) - 3 {
            try acknowledgeWrite(try await request(.writeRequest(.init(handle: handle, value: value))))
        } else {
            try await writeLongValue(value, handle: handle)
        }
    }

    /// Starts ``writeValue(_:handle:)`` for a caller that is not a task (the callback API),
    /// when the value fits in one Write Request (MTU - 3): the acknowledgement goes to
    /// `completion` as ``StartedProcedure/finished(_:)`` on the thread that received the Write
    /// Response, with no task and no thread handoff; an error comes as
    /// ``StartedProcedure/unfinished(_:)``, which throws it. Returns `false`, without calling
    /// `completion`, for a longer value: its prepared writes run in a task
    /// (``writeValue(_:handle:)``). `scope` bounds the wait as a task's `RequestScope` would.
    public func startWriteValue(_ value: [UInt8], handle: UInt16, within scope: RequestScope,
                                completion: @escaping @Sendable (StartedProcedure<Void>) -> Void) -> Bool {
        guard value.count <= Int(mtu) - 3 else { return false }
        request(.writeRequest(.init(handle: handle, value: value)), within: scope) { [self] result in
            switch result.flatMap({ response in Result { try acknowledgeWrite(response) } }) {
            case .success: completion(.finished(()))
            case let .failure(error): completion(.unfinished { throw error })
            }
        }
        return true
    }

    /// Checks that a Write Request's `response` is its Write Response.
    func acknowledgeWrite(_ response: ATTPDU) throws {
        guard case .writeResponse = response else { throw unexpected(response) }
    }

    /// Write Without Response (Core 6.0, Vol 3, Part G, 4.9.1). Returns once the controller
    /// has taken the packet under its buffer credits, so a loop of these is paced by the link
    /// instead of filling memory. The value must fit in one PDU (MTU - 3 bytes).
    public func writeWithoutResponse(_ value: [UInt8], handle: UInt16) async throws {
        guard value.count <= Int(mtu) - 3 else {
            throw HostError.invalidArgument("a write without response carries at most \(Int(mtu) - 3) bytes at MTU \(mtu), not \(value.count)")
        }
        try await sendUnacknowledged(.writeCommand(.init(handle: handle, value: value)))
    }

    /// The largest value one write without response can carry at the current MTU.
    public var maximumWriteWithoutResponseLength: Int { Int(mtu) - 3 }
}
