import BluetoothCore
import BluetoothHCI

/// What the host actor knows of one link: the one record per connection handle, made at LE
/// Connection Complete and ended in one place (``LEHost/endLink(_:error:reason:)``), so that nothing
/// a link's callers wait for outlives it, whichever way it ends.
///
/// The link's other parts each have one owner of their own (docs/ARCHITECTURE.md, "A link's
/// state"): the ``Connection`` (the link settings the controller reported), its ``L2CAPLink``
/// (the ATT bearer with the link's security, and the credit-based channels) on the
/// transport's reader thread, and the GATT server's per-client state on its actor.
struct HostLink {
    /// The link as the app sees it.
    let connection: Connection
    /// Pairing and encryption on the link (LEHost+SecurityManager.swift), from its first use.
    var security: SecuritySession?
    /// The callers of ``Connection/updateParameters(intervalRange:peripheralLatency:supervisionTimeout:)``
    /// waiting for the update's completion, by caller.
    var parameterUpdateWaiters: [UInt64: CheckedContinuation<ConnectionParameters, any Error>] = [:]
    /// As the central: the update run for the peripheral's L2CAP request, if one runs.
    var peerParameterUpdate: PeerParameterUpdate?
    /// The callers of ``Connection/setPHY(_:)`` and ``Connection/setDataLength(octets:time:)``
    /// waiting for the controller's report, by procedure and caller.
    var linkWaiters: [LinkProcedure: [UInt64: CheckedContinuation<LinkChange, any Error>]] = [:]

    init(_ connection: Connection) {
        self.connection = connection
    }

    /// The security session, made on first use.
    var session: SecuritySession {
        get { security ?? SecuritySession() }
        set { security = newValue }
    }
}

extension LEHost {
    /// The connection up on `handle`, if any.
    func connection(_ handle: UInt16) -> Connection? {
        links[handle]?.connection
    }

    /// Whether `connection` is still the link up on its handle (not a later link that reuses it).
    func isCurrent(_ connection: Connection) -> Bool {
        links[connection.handle]?.connection === connection
    }

    /// How many callers wait for `connection`'s security (pair, secure).
    func securityWaiterCount(_ connection: Connection) -> Int {
        guard isCurrent(connection) else { return 0 }
        return links[connection.handle]?.security?.waiters.count ?? 0
    }

    /// Ends everything the host keeps for a link that is gone (reported by the controller,
    /// given up by the host, or lost with the transport): its L2CAP link (bearer and channels;
    /// already closed on the reader thread when the controller reported the end), its GATT
    /// client and server state, its pairing and every caller waiting on it, who get `error`.
    func endLink(_ link: HostLink, error: HostError, reason: HCIStatus) {
        let connection = link.connection
        l2cap.linkEnded(connection.link, error: error)
        connection.gatt.connectionDidClose(error: error)
        server.connectionDidClose(connection.link.bearer)
        connection.markDisconnected(reason: reason)
        for waiter in link.parameterUpdateWaiters.values { waiter.resume(throwing: error) }
        for waiters in link.linkWaiters.values {
            for waiter in waiters.values { waiter.resume(throwing: error) }
        }
        if let session = link.security { securityDidEnd(session, on: connection, error: error) }
    }
}
