// The BluetoothPeripheral module.
