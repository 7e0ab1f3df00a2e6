import BluetoothCore

extension GATTClient {
    /// Read Characteristic Value (Core 6.0, Vol 3, Part G, 4.8.1): one Read Request, so at
    /// most MTU - 1 bytes. Use ``readLongValue(handle:)`` when the value may be longer.
    public func readValue(handle: UInt16) async throws -> [UInt8] {
        try readResponseValue(try await request(.readRequest(.init(handle: handle))))
    }

    /// The value a Read Request's `response` carries.
    func readResponseValue(_ response: ATTPDU) throws -> [UInt8] {
        guard case let .readResponse(read) = response else { throw unexpected(response) }
        return read.value
    }

    /// Reads a characteristic's value, however long it is.
    public func read(_ characteristic: GATTCharacteristic) async throws -> [UInt8] {
        try await readLongValue(handle: characteristic.valueHandle)
    }

    /// Reads a descriptor's value, however long it is.
    public func read(_ descriptor: GATTDescriptor) async throws -> [UInt8] {
        try await readLongValue(handle: descriptor.handle)
    }

    /// Read Multiple Characteristic Values (Core 6.0, Vol 3, Part G, 4.8.4): the values are
    /// concatenated, so all but the last must have a known, fixed length.
    public func readMultiple(handles: [UInt16]) async throws -> [UInt8] {
        guard handles.count >= 2 else { throw HostError.invalidArgument("Read Multiple needs at least two handles") }
        let response = try await request(.readMultipleRequest(.init(handles: handles)))
        guard case let .readMultipleResponse(read) = response else { throw unexpected(response) }
        return read.setOfValues
    }

    /// Read Multiple Variable Length Characteristic Values (Core 6.0, Vol 3, Part G, 4.8.5):
    /// one value per handle. A value longer than fits in the MTU comes back truncated.
    public func readMultipleVariable(handles: [UInt16]) async throws -> [[UInt8]] {
        guard handles.count >= 2 else { throw HostError.invalidArgument("Read Multiple Variable needs at least two handles") }
        let response = try await request(.readMultipleVariableRequest(.init(handles: handles)))
        guard case let .readMultipleVariableResponse(read) = response else { throw unexpected(response) }
        guard read.values.count <= handles.count else {
            throw HostError.protocolViolation("Read Multiple Variable returned \(read.values.count) values for \(handles.count) handles")
        }
        return read.values.map(\.value)
    }

    /// Read Using Characteristic UUID (Core 6.0, Vol 3, Part G, 4.8.2): the values of every
    /// characteristic of that type in the range, by value handle.
    public func readValues(ofType type: BluetoothUUID, in range: ClosedRange<UInt16> = 0x0001...0xFFFF) async throws -> [(handle: UInt16, value: [UInt8])] {
        try await readByType(type, in: range).map { ($0.handle, $0.value) }
    }
}
