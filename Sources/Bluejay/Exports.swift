// `import Bluejay` is all an app needs: the host stack's value types (PeripheralIdentifier,
// DeviceAddress, BluetoothUUID, AdvertisingData, the `LEHost` actor for `.use` mode, ...) come with it.
@_exported import BluetoothCore
@_exported import BluetoothHost
