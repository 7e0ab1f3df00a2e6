import BluetoothCore

extension GATTClient {
    /// Write Long Characteristic Values (Core 6.0, Vol 3, Part G, 4.9.4), made reliable as in
    /// 4.9.5: each Prepare Write Response must echo the part sent, or the queue is cancelled.
    /// Long writes on one bearer run one at a time, since the server has one prepare queue
    /// per client.
    ///
    /// Throws ``HostError/invalidArgument(_:)`` for a value longer than 65,535 bytes: Prepare
    /// Write carries a 16-bit offset (Core 6.0, Vol 3, Part F, 3.4.6.1).
    public func writeLongValue(_ value: [UInt8], handle: UInt16) async throws {
        guard value.count <= Int(UInt16.max) else {
            throw HostError.invalidArgument("a long write carries at most 65535 bytes, not \(value.count)")
        }
        do { try await longWriteGate.enter() } catch { throw HostError.cancelled }
        defer { longWriteGate.leave() }
        var offset = 0
        do {
            while offset < value.count {
                // Prepare Write Request: opcode, handle, offset, then MTU - 5 bytes of value.
                let end = min(value.count, offset + Int(bearer.mtu) - 5)
                let part = Array(value[offset..<end])
                let response = try await request(.prepareWriteRequest(.init(handle: handle, offset: UInt16(offset), partValue: part)))
                guard case let .prepareWriteResponse(echo) = response else { throw unexpected(response) }
                guard echo.handle == handle, echo.offset == UInt16(offset), echo.partValue == part else {
                    throw HostError.protocolViolation("Prepare Write Response did not echo the part written at offset \(offset)")
                }
                offset = end
            }
        } catch {
            // Leave no half-written value queued on the server (best effort).
            if closedError == nil { _ = try? await request(.executeWriteRequest(.init(flags: .cancel))) }
            throw error
        }
        let response = try await request(.executeWriteRequest(.init(flags: .write)))
        guard case .executeWriteResponse = response else { throw unexpected(response) }
    }
}
