/// What a central does in one step of its loop.
enum SoakOperation: String, CaseIterable, Sendable, Comparable {
    case connect
    case disconnect
    /// Disconnect, then connect to the same peripheral again.
    case reconnect
    /// Discover the whole GATT database (services, characteristics, descriptors).
    case discover
    /// Read a short value (one ATT Read).
    case read
    /// Write a short value with response (one ATT Write Request).
    case write
    case writeWithoutResponse = "write without response"
    /// Read a value longer than the MTU allows in one answer (Read Blob requests).
    case longRead = "long read"
    /// Write a value longer than one request carries (Prepare Write, Execute Write).
    case longWrite = "long write"
    /// Listen to a numbered notifying or indicating characteristic.
    case listen
    case endListen = "end listen"
    case readRSSI = "read RSSI"
    /// Stop Bluejay and start it again on a new transport to the same controller.
    case restart = "restart Bluejay"
    /// The same, because the controller reset (its transport closed, or it reported a
    /// Hardware Error): never picked at random.
    case recover = "restart Bluejay (recovery)"

    /// How often each operation is picked while connected (relative weights).
    static let connectedMix: [(SoakOperation, Int)] = [
        (.read, 18), (.write, 14), (.writeWithoutResponse, 14), (.longRead, 9), (.longWrite, 9),
        (.listen, 8), (.endListen, 5), (.discover, 4), (.readRSSI, 4), (.disconnect, 4), (.reconnect, 4),
        (.connect, 1), (.restart, 1),
    ]

    /// How often each operation is picked while not connected: mostly connecting, and a
    /// few requests that must fail cleanly with notConnected.
    static let disconnectedMix: [(SoakOperation, Int)] = [
        (.connect, 40), (.read, 2), (.write, 1), (.listen, 1), (.disconnect, 1), (.restart, 1),
    ]

    static func < (lhs: SoakOperation, rhs: SoakOperation) -> Bool {
        let order = allCases
        return (order.firstIndex(of: lhs) ?? 0) < (order.firstIndex(of: rhs) ?? 0)
    }
}
