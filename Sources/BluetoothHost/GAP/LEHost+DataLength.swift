import BluetoothCore
import BluetoothHCI

extension LEHost {
    /// Asks for longer (or shorter) LL data PDUs on a connection with LE Set Data Length
    /// (Core 6.0, Vol 4, Part E, 7.8.33) and returns the data length in effect.
    ///
    /// `octets` and `time` default to the controller's maximum (LE Read Maximum Data Length).
    /// The controller reports LE Data Length Change only when a value changes (7.7.65.7): when
    /// the link already has what was asked, or the peer allows no more, no report comes, and
    /// the data length in effect is returned after ``HostConfiguration/dataLengthChangeWait``.
    /// Throws ``HostError/linkProcedureRefused(_:)`` by the controller when it refuses the
    /// command (Bumble's controller answers Unknown HCI Command, for one).
    func setDataLength(_ connection: Connection, octets: UInt16?, time: UInt16?) async throws -> DataLength {
        if let octets, !DataLength.octetRange.contains(octets) {
            throw HostError.invalidArgument("data length \(octets) octets is outside \(DataLength.octetRange)")
        }
        if let time, !DataLength.timeRange.contains(time) {
            throw HostError.invalidArgument("data length time \(time) µs is outside \(DataLength.timeRange)")
        }
        guard connection.isConnected else { throw HostError.disconnected(reason: connection.disconnectReason ?? .unknownConnectionIdentifier) }
        do {
            try requireCommand(LESetDataLengthCommand.self, listedAs: .leSetDataLength)
        } catch {
            throw Self.refusal(error, of: .dataLengthUpdate)
        }
        let maximum: (octets: UInt16, time: UInt16)
        if let octets, let time {
            maximum = (octets, time)
        } else {
            let supported = try await maximumDataLength()
            maximum = (octets ?? supported.octets, time ?? supported.time)
        }
        let current = connection.dataLength
        if current.maxTxOctets == maximum.octets, current.maxTxTime == maximum.time { return current }
        let command = LESetDataLengthCommand(connectionHandle: connection.handle, txOctets: maximum.octets, txTime: maximum.time)
        let change = try await awaitLinkChange(.dataLengthUpdate, on: connection, limit: configuration.dataLengthChangeWait,
                                               onTimeout: { .success(.dataLength(connection.dataLength)) },
                                               start: { () throws(HostError) in _ = try await self.send(command) })
        guard case let .dataLength(length) = change else { throw HostError.protocolViolation("the data length update ended with \(change)") }
        return length
    }

    /// The longest LL payload and time the controller can send (LE Read Maximum Data Length,
    /// 7.8.46); the LE maximum on 1M, 251 octets and 2120 µs (Core 6.0, Vol 6, Part B,
    /// 4.5.10), when it cannot say: LE Set Data Length then gets the controller's answer.
    func maximumDataLength() async throws -> (octets: UInt16, time: UInt16) {
        try requirePoweredOn()
        guard controllerInfo?.supports(.leReadMaximumDataLength) == true else { return (251, 2120) }
        do {
            let answer = try await send(LEReadMaximumDataLengthCommand())
            return (answer.supportedMaxTxOctets, answer.supportedMaxTxTime)
        } catch {
            throw Self.refusal(error, of: .dataLengthUpdate)
        }
    }

    /// LE Data Length Change: kept on the connection, told to its listeners and waiters.
    func didChangeDataLength(_ event: LEDataLengthChangeEvent) {
        let length = DataLength(maxTxOctets: event.maxTxOctets, maxTxTime: event.maxTxTime,
                                maxRxOctets: event.maxRxOctets, maxRxTime: event.maxRxTime)
        if let connection = connection(event.connectionHandle), connection.update(dataLength: length) {
            logger.debug("connection \(Hex.format(event.connectionHandle)) data length now \(length)")
            connection.linkChanges.yield(.dataLength(length))
        }
        resolveLinkWaiters(LinkWaiterKey(handle: event.connectionHandle, procedure: .dataLengthUpdate), with: .success(.dataLength(length)))
    }
}
