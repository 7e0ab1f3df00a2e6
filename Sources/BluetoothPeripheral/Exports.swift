// `import BluetoothPeripheral` is all a peripheral app needs: the host stack's types
// (LEHost, GATTPublishedCharacteristic, ATTErrorCode, AdvertisingData, ...) and the profiles
// and serde family come with it.
@_exported import BluetoothCore
@_exported import BluetoothHost
@_exported import GATTProfiles
