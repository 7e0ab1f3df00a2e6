import BluetoothCore

/// Signed Write Without Response (Core 6.0, Vol 3, Part G, 4.9.2).
extension GATTClient {
    /// Writes a characteristic's value with a Signed Write Command: no acknowledgement, and
    /// a signature (SignCounter and MAC, made with the CSRK this device distributed when
    /// bonding) lets the server trust it on a link that is not encrypted. The characteristic
    /// must have the Authenticated Signed Writes property.
    ///
    /// On an encrypted link the value goes as a plain Write Command instead: data signing is
    /// not used on a link in LE security mode 1 level 2 or higher (Core 6.0, Vol 3, Part C,
    /// 10.2.2), whose encryption already authenticates every PDU; no counter is used.
    ///
    /// The key and counter come from the bearer's ``ATTBearer/signedWriteSigner`` (a host
    /// gives one reading its bond store); without one, or without a CSRK for the peer, this
    /// throws. The value must fit in one PDU with its 12-octet signature (MTU - 15 bytes).
    public func writeSigned(_ value: [UInt8], to characteristic: GATTCharacteristic) async throws {
        guard characteristic.properties.contains(.authenticatedSignedWrites) else {
            throw HostError.invalidArgument("characteristic \(characteristic.uuid) does not take signed writes")
        }
        if bearer.security.isEncrypted {
            try await writeWithoutResponse(value, handle: characteristic.valueHandle)
            return
        }
        guard value.count <= maximumSignedWriteLength else {
            throw HostError.invalidArgument("a signed write carries at most \(maximumSignedWriteLength) bytes at MTU \(mtu), not \(value.count)")
        }
        guard let signer = bearer.signedWriteSigner else {
            throw HostError.unsupported("signed writes on a client without a signer")
        }
        let key = try await signer(bearer.peer)
        let command = ATTSignedWriteCommand(handle: characteristic.valueHandle, value: value, signedWith: key)
        logger.debug("signed write to \(Hex.format(characteristic.valueHandle, digits: 4)), SignCounter \(key.signCounter)")
        try await sendUnacknowledged(.signedWriteCommand(command))
    }

    /// Sets what signs this client's signed writes, for a client wired in memory; a host's
    /// connections have the host's.
    public func setSignedWriteSigner(_ signer: SignedWriteSigner?) {
        bearer.setSignedWriteSigner(signer)
    }

    /// The largest value one signed write can carry at the current MTU: MTU - 3 - 12.
    public var maximumSignedWriteLength: Int { Int(mtu) - 3 - ATTSignedWriteCommand.signatureLength }
}
