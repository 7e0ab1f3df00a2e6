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
        var value = try await readValue(handle: handle)
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
