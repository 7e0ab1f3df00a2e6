import BluetoothHCI

/// The timing of an LE connection, in the units of the specification.
public struct ConnectionParameters: Sendable, Equatable, CustomStringConvertible {
    /// Connection interval, in units of 1.25 ms (7.5 ms to 4 s).
    public var interval: UInt16
    /// How many connection events the peripheral may skip.
    public var peripheralLatency: UInt16
    /// Supervision timeout, in units of 10 ms.
    public var supervisionTimeout: UInt16

    public init(interval: UInt16, peripheralLatency: UInt16, supervisionTimeout: UInt16) {
        self.interval = interval
        self.peripheralLatency = peripheralLatency
        self.supervisionTimeout = supervisionTimeout
    }

    public var intervalMilliseconds: Double { Double(interval) * 1.25 }
    public var supervisionTimeoutMilliseconds: Int { Int(supervisionTimeout) * 10 }

    public var description: String {
        "interval \(intervalMilliseconds) ms, latency \(peripheralLatency), timeout \(supervisionTimeoutMilliseconds) ms"
    }
}

/// What a central asks for when it creates a connection.
public struct ConnectionRequest: Sendable, Equatable {
    /// Acceptable connection interval range, in units of 1.25 ms (default 15 ms to 30 ms).
    public var intervalRange: ClosedRange<UInt16> = 12...24
    public var peripheralLatency: UInt16 = 0
    /// Supervision timeout in units of 10 ms (default 5 s).
    public var supervisionTimeout: UInt16 = 500
    /// Scan interval and window while initiating, in units of 0.625 ms (default 60 ms / 60 ms).
    public var scanInterval: UInt16 = 0x0060
    public var scanWindow: UInt16 = 0x0060

    public init() {}
}
