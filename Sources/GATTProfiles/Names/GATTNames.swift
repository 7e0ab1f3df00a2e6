import BluetoothCore

/// Names of well-known services, characteristics and descriptors: the Bluetooth SIG's
/// 16-bit assigned numbers (Assigned Numbers 3.4, 3.7 and 3.8), the vendor services of the
/// shipped profiles, and Nordic's UART service.
///
/// ```swift
/// GATTNames.name(forService: "180D")          // "Heart Rate"
/// GATTNames.name(forCharacteristic: "2A37")   // "Heart Rate Measurement"
/// GATTNames.name(forDescriptor: "2902")       // "Client Characteristic Configuration"
/// ```
public enum GATTNames {
    public static func name(forService uuid: BluetoothUUID) -> String? {
        if let short = uuid.uint16, let name = services[short] { return name }
        return vendorServices[uuid]
    }

    public static func name(forCharacteristic uuid: BluetoothUUID) -> String? {
        if let short = uuid.uint16, let name = characteristics[short] { return name }
        return vendorCharacteristics[uuid]
    }

    public static func name(forDescriptor uuid: BluetoothUUID) -> String? {
        uuid.uint16.flatMap { descriptors[$0] }
    }

    /// The attribute types GATT itself defines (Core 6.0, Vol 3, Part G, 3.4).
    public static func name(forAttributeType uuid: BluetoothUUID) -> String? {
        uuid.uint16.flatMap { declarations[$0] } ?? name(forDescriptor: uuid)
    }

    static let declarations: [UInt16: String] = [
        0x2800: "Primary Service", 0x2801: "Secondary Service", 0x2802: "Include", 0x2803: "Characteristic",
    ]

    static let vendorServices: [BluetoothUUID: String] = [
        TISensorTag.AccelerometerService.uuid: TISensorTag.AccelerometerService.name,
        BluetoothUUID("6E400001-B5A3-F393-E0A9-E50E24DCCA9E"): "Nordic UART Service",
    ]

    static let vendorCharacteristics: [BluetoothUUID: String] = [
        TISensorTag.AccelerometerService.Data.uuid: TISensorTag.AccelerometerService.Data.name,
        TISensorTag.AccelerometerService.Enabled.uuid: TISensorTag.AccelerometerService.Enabled.name,
        TISensorTag.AccelerometerService.UpdatePeriod.uuid: TISensorTag.AccelerometerService.UpdatePeriod.name,
        BluetoothUUID("6E400002-B5A3-F393-E0A9-E50E24DCCA9E"): "Nordic UART RX",
        BluetoothUUID("6E400003-B5A3-F393-E0A9-E50E24DCCA9E"): "Nordic UART TX",
    ]
}
