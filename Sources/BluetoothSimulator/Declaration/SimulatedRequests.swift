import BluetoothCore
import BluetoothHost
import BluetoothPeripheral

/// A central reads a simulated characteristic: what a ``SimulatedReadHandler`` gets.
public struct SimulatedRead: Sendable {
    /// Who reads.
    public var central: Central
    /// The characteristic read.
    public var characteristic: BluetoothUUID
    /// Where the central starts reading (Read Blob); answer the whole value anyway.
    public var offset: Int
    /// The value stored now.
    public var storedValue: [UInt8]
    /// The peripheral, to change other values or notify from a handler.
    public var device: SimulatedDevice
}

/// A central writes a simulated characteristic: what a ``SimulatedWriteHandler`` gets.
public struct SimulatedWrite: Sendable {
    /// Who writes.
    public var central: Central
    /// The characteristic written.
    public var characteristic: BluetoothUUID
    /// The whole value written (a long write arrives assembled).
    public var value: [UInt8]
    /// Write Request, Write Command (no answer is sent) or prepared write.
    public var kind: GATTWriteRequest.Kind
    /// The value stored before this write.
    public var storedValue: [UInt8]
    /// The peripheral, to answer on another characteristic (`SimulatedDevice/notify(_:on:to:)`).
    public var device: SimulatedDevice
}
