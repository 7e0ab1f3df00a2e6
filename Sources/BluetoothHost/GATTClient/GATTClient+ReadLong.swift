import BluetoothCore

extension GATTClient {
    /// The longest attribute value the specification allows (Core 6.0, Vol 3, Part F, 3.2.9).
    /// Some servers hold longer values; the client reads and writes them anyway, up to the
    /// largest offset ATT can express.
    public static let maximumAttributeValueLength = 512
    /// Offsets are 16-bit, so no value read or written in parts can be longer than this.
    public static let maximumValueLength = Int(UInt16.max)

    /// Read Long Characteristic Value (Core 6.0, Vol 3, Part G, 4.8.3): a Read Request, then
    /// Read Blob Requests at increasing offsets for as long as each part fills the MTU.
    public func readLongValue(handle: UInt16) async throws -> [UInt8] {
        try await readLongValue(handle: handle, after: try await readValue(handle: handle))
    }

    /// Starts ``readLongValue(handle:)`` for a caller that is not a task (the callback API):
    /// the Read Request's response is handled on the thread that receives it, and a first part
    /// shorter than MTU - 1, the whole value, goes to `completion` from there as
    /// ``StartedProcedure/finished(_:)``, with no task and no thread handoff. Otherwise
    /// `completion` gets ``StartedProcedure/unfinished(_:)``: the Read Blob Requests that follow a
    /// full part, or the first response's error, for the caller to run in a task of its own.
    /// `scope` bounds the first request's wait as a task's `RequestScope` would.
    public func startReadLongValue(handle: UInt16, within scope: RequestScope,
                                   completion: @escaping @Sendable (StartedProcedure<[UInt8]>) -> Void) {
        request(.readRequest(.init(handle: handle)), within: scope) { [self] result in
            let first = result.flatMap { response in Result { try readResponseValue(response) } }
            switch first {
            case let .success(value) where value.count < Int(mtu) - 1:
                completion(.finished(value))
            case let .success(part):
                completion(.unfinished { [self] in try await readLongValue(handle: handle, after: part) })
            case let .failure(error):
                completion(.unfinished { throw error })
            }
        }
    }

    /// The rest of a long read whose Read Request returned `first`.
    private func readLongValue(handle: UInt16, after first: [UInt8]) async throws -> [UInt8] {
        var value = first
        var lastPartLength = value.count
        // A part shorter than MTU - 1 is the last one.
        while lastPartLength >= Int(mtu) - 1, value.count < Self.maximumValueLength {
            let response: ATTPDU
            do {
                response = try await request(.readBlobRequest(.init(handle: handle, offset: UInt16(value.count))))
            } catch HostError.att(let error) where error.code == .attributeNotLong || error.code == .invalidOffset {
                // Not long after all, or the value ends exactly at this offset.
                break
            }
            guard case let .readBlobResponse(blob) = response else { throw unexpected(response) }
            guard !blob.partValue.isEmpty else { break }
            value += blob.partValue
            lastPartLength = blob.partValue.count
        }
        return value
    }
}
