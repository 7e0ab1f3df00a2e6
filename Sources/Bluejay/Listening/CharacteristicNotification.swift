import BluetoothHost
import Foundation

/// One notification (or indication) value with where it came from: what
/// ``Bluejay/notifications()`` and the ``NotificationObserver``s get, for every listened
/// characteristic (LittleBluetooth's stream of all notifications).
public struct CharacteristicNotification: Sendable, Equatable {
    public var peripheral: PeripheralIdentifier
    public var characteristic: CharacteristicIdentifier
    public var value: Data

    public init(peripheral: PeripheralIdentifier, characteristic: CharacteristicIdentifier, value: Data) {
        self.peripheral = peripheral
        self.characteristic = characteristic
        self.value = value
    }
}
