import BluetoothHost

/// The outcome of a read, or of one notification of a listen: the value made by the
/// ``Receivable``, or what went wrong.
public typealias ReadResult<R> = Result<R, BluejayError>

/// The outcome of a write: `.success` or `.failure(error)`.
public typealias WriteResult = Result<Void, BluejayError>

/// The outcome of a connection request: the peripheral now connected, or what went wrong.
public typealias ConnectionResult = Result<PeripheralIdentifier, BluejayError>

/// The outcome of a background task: its return value, or the first error it threw (a
/// ``BluejayError`` from the ``SynchronizedPeripheral``, or the task's own error).
public typealias RunResult<R> = Result<R, any Error>

/// The outcome of a disconnection request.
public enum DisconnectionResult: Sendable, Equatable {
    /// The link to this peripheral is down (or the attempt to connect to it was abandoned).
    case disconnected(PeripheralIdentifier)
    /// The request failed: ``BluejayError/notConnected`` when there was nothing to
    /// disconnect, ``BluejayError/cancelled`` when it was cancelled while queued.
    case failure(BluejayError)
}

/// How a value is written.
public enum WriteType: Sendable, Equatable {
    /// Write Request: the peripheral acknowledges (Core 6.0, Vol 3, Part G, 4.9.3); values
    /// longer than one PDU go as a long write (4.9.4).
    case withResponse
    /// Write Command: no acknowledgement (Core 6.0, Vol 3, Part G, 4.9.1). Completes when
    /// the controller has taken the packet under its buffer credits, so a loop of these
    /// is paced by the link. The value must fit in one PDU (MTU - 3 bytes).
    case withoutResponse
    /// Signed Write Without Response (Core 6.0, Vol 3, Part G, 4.9.2): a Write Command
    /// signed with the CSRK this device gave the peripheral when bonding, for a characteristic
    /// with the Authenticated Signed Writes property, on a link that is not encrypted (on an
    /// encrypted one it goes as a plain Write Command). Needs a bond whose pairing
    /// distributed a CSRK; the value must fit in one PDU with the 12-octet signature
    /// (MTU - 15 bytes).
    case signed
}

/// What a synchronous listen does after handling a value.
public enum ListenAction: Sendable, Equatable {
    /// Wait for the next value.
    case keepListening
    /// Stop listening and return.
    case done
}

/// What happens when ``Bluejay/listen(to:multipleListenOption:completion:)`` is called on a
/// characteristic that is already listened to. The option of the *existing* listen (the oldest
/// one, when several share the characteristic) decides.
public enum MultipleListenOption: Int, Sendable, Equatable {
    /// The existing listen stays; the new one fails with ``BluejayError/multipleListenTrapped(_:)``.
    case trap
    /// The new listen replaces the existing one, whose callback receives
    /// ``BluejayError/multipleListenReplaced(_:)``.
    case replaceable
    /// The new listen joins the existing one: every listener gets every value (LittleBluetooth's
    /// several listeners per characteristic). The first listener turns the notifications on and
    /// the last one to end turns them off. A later listen joins whatever option it asks for;
    /// once the shared listeners have all ended, the oldest remaining listener's option decides.
    case shared
}

/// Kept so that code written for Bluejay on iOS compiles unchanged. Linux has no system
/// alerts: Bluejay records the options and logs the events they name at `notice` level.
public struct WarningOptions: Sendable, Equatable {
    public var notifyOnConnection: Bool
    public var notifyOnDisconnection: Bool
    public var notifyOnNotification: Bool

    public init(notifyOnConnection: Bool = false, notifyOnDisconnection: Bool = false, notifyOnNotification: Bool = false) {
        self.notifyOnConnection = notifyOnConnection
        self.notifyOnDisconnection = notifyOnDisconnection
        self.notifyOnNotification = notifyOnNotification
    }

    /// No notifications.
    public static let `default` = WarningOptions()
}
