import BluetoothCore
import BluetoothHost

/// An iBeacon to advertise, as BlueCap's beacon region describes it.
public struct BeaconRegion: Hashable, Sendable {
    public var proximityUUID: BluetoothUUID
    /// Names the region for the application; not advertised.
    public var identifier: String
    public var major: UInt16
    public var minor: UInt16
    /// RSSI at one metre, in dBm.
    public var measuredPower: Int8

    public init(proximityUUID: BluetoothUUID, identifier: String, major: UInt16, minor: UInt16, measuredPower: Int8 = -59) {
        self.proximityUUID = proximityUUID
        self.identifier = identifier
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    public var beacon: IBeacon {
        IBeacon(proximityUUID: proximityUUID, major: major, minor: minor, measuredPower: measuredPower)
    }
}
