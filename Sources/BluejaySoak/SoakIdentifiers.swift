import Bluejay
import BluetoothCore

/// The soak peripherals' one service and its characteristics.
///
/// - FFF1 notifies, FFF2 indicates: numbered values (see ``NumberedValue``).
/// - FF1n and FF2n belong to central n alone (so that what it reads back can be checked
///   against what it wrote): FF1n a short value (read, write, write without response, at
///   most 20 bytes, one ATT PDU even at the smallest MTU), FF2n a long one (read, write, up
///   to 512 bytes: long reads and long writes on peripherals with a small MTU).
enum SoakIdentifiers {
    static let serviceUUID: BluetoothUUID = "FFF0"
    static let notifyingUUID: BluetoothUUID = "FFF1"
    static let indicatingUUID: BluetoothUUID = "FFF2"

    /// The longest short value.
    static let shortValueLimit = 20
    /// The longest long value (the longest attribute value, Core 6.0, Vol 3, Part F, 3.2.9).
    static let longValueLimit = 512
    /// Every value characteristic starts with this value (again after a reboot).
    static let initialValue: [UInt8] = [0xEE]

    static func shortUUID(central: Int) -> BluetoothUUID {
        BluetoothUUID(UInt16(0xFF10 + central))
    }

    static func longUUID(central: Int) -> BluetoothUUID {
        BluetoothUUID(UInt16(0xFF20 + central))
    }

    static let service = ServiceIdentifier(uuid: serviceUUID)
    static let notifying = CharacteristicIdentifier(uuid: notifyingUUID, service: service)
    static let indicating = CharacteristicIdentifier(uuid: indicatingUUID, service: service)

    static func short(central: Int) -> CharacteristicIdentifier {
        CharacteristicIdentifier(uuid: shortUUID(central: central), service: service)
    }

    static func long(central: Int) -> CharacteristicIdentifier {
        CharacteristicIdentifier(uuid: longUUID(central: central), service: service)
    }
}
